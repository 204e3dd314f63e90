/// Runs `body` over `items` with at most `limit` running at once, returning each item's outcome in item order.
/// One failure does not stop the others: exchanges report per-version failures and go on.
package func mapConcurrently<Item: Sendable, Output: Sendable>(
    _ items: [Item], limit: Int, _ body: @escaping @Sendable (Item) async throws -> Output
) async -> [Result<Output, any Error>] {
    var results = [Result<Output, any Error>?](repeating: nil, count: items.count)
    await withTaskGroup(of: (Int, Result<Output, any Error>).self) { group in
        var next = 0
        func startNext() {
            guard next < items.count else { return }
            let index = next, item = items[index]
            next += 1
            group.addTask {
                do { return (index, .success(try await body(item))) } catch { return (index, .failure(error)) }
            }
        }
        for _ in 0..<max(1, limit) { startNext() }
        while let (index, result) = await group.next() {
            results[index] = result
            startNext()
        }
    }
    return results.map { $0! }
}

/// Runs `body` on `items`, `limit` at a time, and hands each result to `consume` in the items' order as soon as it
/// and every earlier one are done, on the caller's task: the work of consuming one (a store write) overlaps the
/// transfers of the next ones instead of alternating with them. At most `ahead` results wait for `consume` at once
/// (at least `limit`), so memory stays bounded whatever the count.
package func forEachConcurrentlyInOrder<Item: Sendable, Output: Sendable>(
    _ items: [Item], limit: Int, ahead: Int,
    _ body: @escaping @Sendable (Item) async throws -> Output,
    consume: (Item, Result<Output, any Error>) async -> Void
) async {
    let limit = max(1, limit), ahead = max(limit, ahead)
    await withTaskGroup(of: (Int, Result<Output, any Error>).self) { group in
        var next = 0, consumed = 0, running = 0
        var done: [Int: Result<Output, any Error>] = [:]
        func startWhatFits() {
            while running < limit, next < items.count, next < consumed + ahead {
                let index = next, item = items[index]
                next += 1
                running += 1
                group.addTask {
                    do { return (index, .success(try await body(item))) } catch { return (index, .failure(error)) }
                }
            }
        }
        startWhatFits()
        while let (index, result) = await group.next() {
            running -= 1
            done[index] = result
            startWhatFits()
            while let ready = done.removeValue(forKey: consumed) {
                await consume(items[consumed], ready)
                consumed += 1
                startWhatFits()
            }
        }
    }
}
