import Foundation
import Testing
@testable import LLVSRetention

/// The policy against restic's rules, on dates in UTC (the calendar is given, so the machine's zone changes nothing).
struct RetentionPolicyTests {
    static let calendar: Calendar = {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    /// A date from `2026-12-06 14:30`-style text, in UTC.
    static func date(_ text: String) -> Date {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.date(from: text)!
    }

    static let now = date("2027-01-01 00:00")

    /// The IDs the policy keeps, newest first, and the reasons of each.
    func kept(_ policy: RetentionPolicy, _ dates: [String]) -> [String: [RetentionReason]] {
        let backups = dates.map { (id: $0, date: Self.date($0)) }
        let decisions = policy.decide(backups, now: Self.now, calendar: Self.calendar)
        return Dictionary(uniqueKeysWithValues: decisions.filter(\.isKept).map { ($0.id, $0.reasons) })
    }

    @Test func keepLastKeepsTheNewestAndNothingElse() {
        let dates = ["2026-12-01 10:00", "2026-12-02 10:00", "2026-12-03 10:00", "2026-12-04 10:00"]
        let kept = kept(RetentionPolicy(last: 2), dates)
        #expect(Set(kept.keys) == ["2026-12-04 10:00", "2026-12-03 10:00"])
        #expect(kept["2026-12-04 10:00"] == [.newest, .last])
    }

    @Test func dailyTakesTheNewestOfEachDayAndCountsOnlyDaysWithBackups() {
        // Three on the 5th, none on the 4th, two on the 3rd, one on the 1st: three days are the 5th, 3rd and 1st.
        let dates = [
            "2026-12-05 23:00", "2026-12-05 12:00", "2026-12-05 01:00", "2026-12-03 18:00", "2026-12-03 09:00",
            "2026-12-01 08:00",
        ]
        let kept = kept(RetentionPolicy(daily: 3), dates)
        #expect(Set(kept.keys) == ["2026-12-05 23:00", "2026-12-03 18:00", "2026-12-01 08:00"])
    }

    @Test func aCalendarRuleWithCountsLeftKeepsTheOldestBackup() {
        // Two days asked, one day of backups: the oldest backup of that day is kept too (restic does the same).
        let dates = ["2026-12-05 23:00", "2026-12-05 12:00", "2026-12-05 01:00"]
        let kept = kept(RetentionPolicy(daily: 2), dates)
        #expect(Set(kept.keys) == ["2026-12-05 23:00", "2026-12-05 01:00"])
    }

    @Test func weeksRunFromMondayToSunday() {
        // 2026-12-06 is a Sunday and 2026-12-07 a Monday: two weeks. 2026-11-30 is the Monday of the first.
        let dates = ["2026-12-07 09:00", "2026-12-06 22:00", "2026-12-04 10:00", "2026-11-30 08:00"]
        let kept = kept(RetentionPolicy(weekly: 2), dates)
        #expect(Set(kept.keys) == ["2026-12-07 09:00", "2026-12-06 22:00"])
    }

    @Test func monthlyAndYearlyCombineAndEachBackupSaysWhy() {
        let dates = [
            "2026-12-20 10:00", "2026-12-02 10:00", "2026-11-15 10:00", "2025-06-01 10:00", "2024-03-01 10:00",
        ]
        let kept = kept(RetentionPolicy(monthly: 2, yearly: 2), dates)
        #expect(Set(kept.keys) == ["2026-12-20 10:00", "2026-11-15 10:00", "2025-06-01 10:00"])
        #expect(kept["2026-12-20 10:00"] == [.newest, .monthly, .yearly])
        #expect(kept["2025-06-01 10:00"] == [.yearly])
    }

    @Test func withinCountsBackFromTheNewestBackupNotFromNow() {
        // The newest is a month before `now`; within 3d keeps what is less than three days older than it.
        let dates = ["2026-12-01 12:00", "2026-11-29 13:00", "2026-11-28 11:00", "2026-11-20 12:00"]
        let kept = kept(RetentionPolicy(within: KeepDuration("3d")), dates)
        #expect(Set(kept.keys) == ["2026-12-01 12:00", "2026-11-29 13:00"])
    }

    @Test func theNewestAndTheFutureAreAlwaysKept() {
        let dates = ["2027-03-01 10:00", "2026-12-02 10:00", "2026-12-01 10:00"]
        let kept = kept(RetentionPolicy(last: 0), dates)
        #expect(kept["2027-03-01 10:00"] == [.newest, .future])
        #expect(kept.count == 1)
    }

    @Test func durationsParseAsResticSpellsThem() {
        #expect(KeepDuration("1y2m3d4h") == KeepDuration(years: 1, months: 2, days: 3, hours: 4))
        #expect(KeepDuration("36h") == KeepDuration(hours: 36))
        #expect(KeepDuration("7d")?.description == "7d")
        for bad in ["", "3", "d", "3x", "1d2d", "-1d", "1.5d"] { #expect(KeepDuration(bad) == nil, "\(bad)") }
    }
}
