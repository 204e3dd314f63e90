import Foundation
import Testing
@testable import LLVS
import LLVSSupport

@Suite struct HTTPDateTests {
    @Test func theFastPathReadsWhatTheFormatterReads() {
        let date = Date(timeIntervalSince1970: 1_506_522_514)  // Wed, 27 Sep 2017 14:28:34 GMT
        #expect(HTTPDate.parse("Wed, 27 Sep 2017 14:28:34 GMT") == date)
        #expect(HTTPDate.parseRFC1123("Wed, 27 Sep 2017 14:28:34 GMT") == date)
        #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
        #expect(HTTPDate.parse("Wednesday, 27-Sep-17 14:28:34 GMT") == date, "RFC 850 still goes through the formatter")
        #expect(HTTPDate.parse("Wed Sep 27 14:28:34 2017") == date, "asctime too")
        for bad in [
            "Wed, 27 Sept 2017 14:28:34 GMT", "Wed, 27 Sep 2017 25:00:00 GMT", "27 Sep 2017", "",
            "Wed, 32 Sep 2017 14:28:34 GMT",
        ] {
            #expect(HTTPDate.parseRFC1123(bad) == nil, "\(bad)")
        }
    }
}
