import Foundation
import Testing

@testable import RelaySimulator

@Suite struct HTTP2TestIdentityTests {
    @Test func identityRoundTripsThroughItsDirectory() throws {
        let directory = try temporaryDirectory()
        #expect(try HTTP2TestIdentity.load(from: directory) == nil)

        let identity = try HTTP2TestIdentity.generate()
        let caFile = try identity.write(to: directory)
        #expect(caFile == directory + "/ca.pem")
        #expect(try String(contentsOfFile: caFile, encoding: .utf8) == identity.certificatePEM)
        #expect(identity.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))

        let loaded = try #require(try HTTP2TestIdentity.load(from: directory))
        #expect(loaded.certificatePEM == identity.certificatePEM)
        #expect(loaded.privateKeyPEM == identity.privateKeyPEM)
    }

    @Test func twoGeneratedIdentitiesDiffer() throws {
        #expect(try HTTP2TestIdentity.generate().certificatePEM != HTTP2TestIdentity.generate().certificatePEM)
    }

    @Test func garbageIsNotAnIdentity() {
        #expect(throws: (any Error).self) {
            _ = try HTTP2TestIdentity(certificatePEM: "not a certificate", privateKeyPEM: "not a key")
        }
    }

    @Test(arguments: [
        ("127.0.0.1", [127, 0, 0, 1] as [UInt8]?),
        ("::1", Array(repeating: 0, count: 15) + [1]),
        ("10.1.2.3", [10, 1, 2, 3]),
        ("localhost", nil),
        ("api.push.apple.com", nil),
    ])
    func ipAddressLiteralsAreRecognised(host: String, bytes: [UInt8]?) {
        #expect(HTTP2TestIdentity.ipAddressBytes(host) == bytes)
    }
}
