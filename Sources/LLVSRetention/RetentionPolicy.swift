import Foundation

/// Which backups of one source to keep, with restic's semantics: a backup is kept when any rule selects it; a
/// calendar rule counts only the periods that have backups, taking the newest backup of each; `within` counts back
/// from the newest backup, not from now. When a calendar rule runs out of backups before its count, the oldest
/// backup is kept for it too, so the history kept is as long as the count allows.
///
/// Two rules restic leaves to its user are fixed here, because prune relies on them: the newest backup of a source
/// is always kept (the next backup of that source compares its files with it and names its unchanged chunks without
/// looking for them), and a backup dated after `now` is kept (a clock set wrong must not push real backups out).
public struct RetentionPolicy: Equatable, Sendable {
    public var last: Int?
    public var hourly: Int?
    public var daily: Int?
    public var weekly: Int?
    public var monthly: Int?
    public var yearly: Int?
    public var within: KeepDuration?

    public init(
        last: Int? = nil, hourly: Int? = nil, daily: Int? = nil, weekly: Int? = nil, monthly: Int? = nil,
        yearly: Int? = nil, within: KeepDuration? = nil
    ) {
        self.last = last
        self.hourly = hourly
        self.daily = daily
        self.weekly = weekly
        self.monthly = monthly
        self.yearly = yearly
        self.within = within
    }

    /// Whether any rule is set: a policy with none would remove every backup but the newest, which no one means.
    public var isEmpty: Bool {
        last == nil && hourly == nil && daily == nil && weekly == nil && monthly == nil && yearly == nil
            && within == nil
    }

    /// The decision for each of one source's backups, in the order given. `calendar` sets the periods' boundaries
    /// (the local time zone, weeks Monday to Sunday, as restic). Of backups with equal dates, the one given first is
    /// taken as the newer.
    public func decide(
        _ backups: [(id: String, date: Date)], now: Date, calendar: Calendar = RetentionPolicy.localCalendar
    ) -> [RetentionDecision] {
        let order = backups.indices.sorted { a, b in
            backups[a].date == backups[b].date ? a < b : backups[a].date > backups[b].date
        }
        var reasons = [[RetentionReason]](repeating: [], count: backups.count)
        guard let newest = order.first else { return [] }
        reasons[newest].append(.newest)
        for index in backups.indices where backups[index].date > now { reasons[index].append(.future) }
        var rules: [(reason: RetentionReason, left: Int, bucket: (Date, Int) -> Int)] = []
        func add(_ count: Int?, _ reason: RetentionReason, _ bucket: @escaping (Date, Int) -> Int) {
            if let count, count > 0 { rules.append((reason, count, bucket)) }
        }
        add(last, .last) { _, position in position }
        add(hourly, .hourly) { date, _ in Self.bucket(date, [.year, .month, .day, .hour], calendar) }
        add(daily, .daily) { date, _ in Self.bucket(date, [.year, .month, .day], calendar) }
        add(weekly, .weekly) { date, _ in Self.bucket(date, [.yearForWeekOfYear, .weekOfYear], calendar) }
        add(monthly, .monthly) { date, _ in Self.bucket(date, [.year, .month], calendar) }
        add(yearly, .yearly) { date, _ in Self.bucket(date, [.year], calendar) }
        var lastBucket = [Int?](repeating: nil, count: rules.count)
        let horizon = within.map { $0.subtracted(from: backups[newest].date, calendar: calendar) }
        for (position, index) in order.enumerated() {
            let date = backups[index].date
            for rule in rules.indices where rules[rule].left > 0 {
                let bucket = rules[rule].bucket(date, position)
                // The oldest backup is kept by every rule that has counts left (restic does the same).
                if bucket != lastBucket[rule] || position == order.count - 1 {
                    lastBucket[rule] = bucket
                    rules[rule].left -= 1
                    reasons[index].append(rules[rule].reason)
                }
            }
            if let horizon, date > horizon { reasons[index].append(.within) }
        }
        return backups.indices.map { RetentionDecision(id: backups[$0].id, reasons: reasons[$0]) }
    }

    /// A period's number: the given components of `date`, packed so that later periods have larger numbers.
    static func bucket(_ date: Date, _ components: [Calendar.Component], _ calendar: Calendar) -> Int {
        components.reduce(0) { packed, component in packed * 10_000 + calendar.component(component, from: date) }
    }

    /// The calendar restic counts periods in: the local time zone, weeks from Monday (ISO 8601).
    public static var localCalendar: Calendar {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = .current
        return calendar
    }
}

/// Why a backup is kept.
public enum RetentionReason: String, Codable, Sendable, CaseIterable {
    case last, hourly, daily, weekly, monthly, yearly, within
    /// The newest backup of its source, always kept.
    case newest
    /// Dated after now.
    case future

    public var description: String {
        switch self {
        case .last: "last"
        case .hourly: "hourly"
        case .daily: "daily"
        case .weekly: "weekly"
        case .monthly: "monthly"
        case .yearly: "yearly"
        case .within: "within"
        case .newest: "newest of its source"
        case .future: "dated in the future"
        }
    }
}

/// What a policy decided for one backup: kept for these reasons, or (none) removed.
public struct RetentionDecision: Equatable, Sendable {
    public var id: String
    public var reasons: [RetentionReason]
    public var isKept: Bool { !reasons.isEmpty }
}

/// A span of calendar time, as restic spells it: `1y2m3d4h` (years, months, days, hours; each part optional, at
/// least one given).
public struct KeepDuration: Equatable, Sendable, CustomStringConvertible {
    public var years = 0
    public var months = 0
    public var days = 0
    public var hours = 0

    public init(years: Int = 0, months: Int = 0, days: Int = 0, hours: Int = 0) {
        self.years = years
        self.months = months
        self.days = days
        self.hours = hours
    }

    /// Parses `1y2m3d4h`; nil for anything else (an empty string, an unknown unit, a number without a unit).
    public init?(_ text: String) {
        var number = ""
        var seen = Set<Character>()
        for character in text {
            if character.isASCII, character.isNumber {
                number.append(character)
                continue
            }
            guard let value = Int(number), value >= 0, !seen.contains(character) else { return nil }
            seen.insert(character)
            switch character {
            case "y": years = value
            case "m": months = value
            case "d": days = value
            case "h": hours = value
            default: return nil
            }
            number = ""
        }
        guard number.isEmpty, !seen.isEmpty else { return nil }
    }

    public var description: String {
        [(years, "y"), (months, "m"), (days, "d"), (hours, "h")].filter { $0.0 > 0 }.map { "\($0.0)\($0.1)" }
            .joined()
    }

    /// `date` moved back by this span.
    public func subtracted(from date: Date, calendar: Calendar) -> Date {
        var components = DateComponents()
        components.year = -years
        components.month = -months
        components.day = -days
        components.hour = -hours
        return calendar.date(byAdding: components, to: date) ?? date
    }
}
