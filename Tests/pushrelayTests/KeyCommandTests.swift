import Foundation
import RelayCore
import RelayStore
import Testing

@testable import RelayApplication
@testable import RelayServer
@testable import pushrelay

/// `key revoke` and `key rotate` take what an install holds, the whole key, and never repeat its secret.
@Suite(.timeLimit(.minutes(1)))
struct KeyCommandTests {
    @Test func revokeTakesTheWholeKeyAndNoLinePrintsItsSecret() async throws {
        let cli = CLIFrontEnd()
        try await cli.execute(["tenant", "create", "acme"])
        guard case .printed(let issuedLines) = try await cli.execute(["key", "issue", "--tenant", "acme"]) else {
            Issue.record("key issue failed: \(cli.output.all)")
            return
        }
        let key = try #require(issuedLines.first { $0.hasPrefix("prk_") })
        let id = try #require(TenantKeys.parse(key)?.id)
        let secret = try #require(TenantKeys.parse(key)?.secret)
        let shownOnce = cli.output.all.count

        #expect(try await cli.execute(["key", "revoke", key]) == .printed(["Key \(id) is revoked."]))
        #expect(try await cli.store.key(id: id)?.revokedAt != nil)
        // Again, as JSON: nothing changes, and the key object has no secret.
        guard case .printed(let json) = try await cli.execute(["key", "revoke", key, "--json"]) else {
            Issue.record("key revoke --json failed: \(cli.output.all)")
            return
        }
        #expect(JSONValue.decode(Array((json.last ?? "").utf8))?["id"] == .string(id))

        // Refusals name the key id at most: a revoked key to rotate, an unknown key, a mangled one, a secret alone.
        let rotated = try await cli.execute(["key", "rotate", key])
        #expect(rotated == .error("The key \(id) is revoked or expired; issue a new key instead of rotating it."))
        let unknown = try await cli.execute(["key", "revoke", "prk_0123456789abcdef_\(secret)"])
        #expect(unknown == .error("No key with the id '0123456789abcdef'."))
        // (A secret that begins with `_`, as one in 64 do, makes the last form the key itself.)
        for mangled in ["prk_\(id.dropFirst())_\(secret)", "prk_\(secret)", secret, "prk_\(id)\(secret)"]
        where mangled != key {
            // After `--`, as a shell user must pass it: a bare secret is base64url and may begin with `-` (even `-h`).
            let refused = try await cli.execute(["key", "revoke", "--", mangled])
            guard case .error(let message) = refused else {
                Issue.record("\(mangled) was not refused: \(refused)")
                continue
            }
            #expect(message.hasPrefix("No such key"))
        }
        try await cli.execute(["key", "list", "--tenant", "acme", "--json"])
        try await cli.execute(["tenant", "show", "acme"])

        let later = cli.output.all.dropFirst(shownOnce)
        #expect(!later.isEmpty)
        for line in later {
            #expect(!line.contains(secret), "\(line)")
        }
        // Nor does the audit log hold it.
        let records = try await cli.adminRecords().map { $0.encodedString() }
        #expect(records.contains { $0.contains("\"key.revoke\"") })
        #expect(!records.contains { $0.contains(secret) })
    }

    @Test func rotateTakesTheWholeKey() async throws {
        let cli = CLIFrontEnd()
        try await cli.execute(["tenant", "create", "acme"])
        let issued = try await cli.run(["key", "issue", "--tenant", "acme", "--json"])
        let key = try #require(issued.jsonValue?["key"]?.stringValue)
        let secret = try #require(TenantKeys.parse(key)?.secret)
        let rotated = try await cli.run(["key", "rotate", key, "--overlap-days=0", "--json"])
        let replaced = try #require(rotated.jsonValue?["replaces"])
        #expect(replaced["id"] == issued.jsonValue?["id"])
        #expect(replaced["active"] == .bool(false))
        #expect(!rotated.description.contains(secret))
        // The new key is shown, once; the old one is not.
        #expect(rotated.jsonValue?["key"]?.stringValue?.hasPrefix("prk_") == true)
    }

    /// The admin API resolves a whole key in the path the same way, and does not repeat it either.
    @Test func theAdminAPINeverRepeatsASecretInThePath() async throws {
        let api = APIFrontEnd()
        let secret = String(repeating: "s", count: 43)
        let answers = try await api.run([
            .create("acme", TenantFields()),
            .issueKey(tenant: "acme"),
            .revokeKey(tenant: "acme", .whole(0)),
            .revokeKey(tenant: "acme", .text("prk_0123456789abcdef_\(secret)")),
            .revokeKey(tenant: "acme", .text("prk_0123_\(secret)")),
            .rotateKey(tenant: "acme", .text(secret)),
        ])
        #expect(answers[2].jsonValue?["revokedAt"]?.stringValue != nil)
        #expect(answers[3] == .failed("No key with the id '0123456789abcdef'."))
        for answer in answers.dropFirst(3) {
            #expect(!answer.description.contains(secret), "\(answer)")
        }
    }
}
