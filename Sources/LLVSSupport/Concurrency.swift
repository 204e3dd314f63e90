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
