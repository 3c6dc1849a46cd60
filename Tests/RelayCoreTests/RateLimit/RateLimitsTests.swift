import Foundation
import Testing

@testable import RelayCore

@Suite struct RateLimitsTests {
    @Test func limitsRoundTripThroughJSON() throws {
        let limits = RateLimits(
            ratePerSecond: 2.5, burst: 7, dailyQuota: 40, perDevicePerMinute: 3, criticalReservePerHour: 0)
        let data = try JSONEncoder().encode(limits)
        #expect(try JSONDecoder().decode(RateLimits.self, from: data) == limits)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["criticalReservePerHour"] as? Int == 0)
    }

    /// Limits written before there was a critical reserve read back with the default one.
    @Test func limitsWithoutACriticalReserveGetTheDefault() throws {
        let old = Data(#"{"ratePerSecond":10,"burst":100,"dailyQuota":5000,"perDevicePerMinute":30}"#.utf8)
        let limits = try JSONDecoder().decode(RateLimits.self, from: old)
        #expect(limits == RateLimits(dailyQuota: 5000, criticalReservePerHour: 120))
        #expect(RateLimits().criticalReservePerHour == 120)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(RateLimits.self, from: Data(#"{"ratePerSecond":10,"burst":100}"#.utf8))
        }
    }
}
