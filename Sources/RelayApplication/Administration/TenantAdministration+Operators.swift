import Foundation
package import RelayStore

/// The operators of the admin API, for both front ends: `pushrelay operator …` and `/admin/v1/operators`.
extension TenantAdministration {
    /// A new operator and its token, shown this once (the store keeps only the SHA-256 of its secret).
    package struct CreatedOperator: Sendable {
        package var record: OperatorRecord
        /// `pro_<id>_<secret>`.
        package var token: String
    }

    /// Why `name` cannot name an operator, or `nil`: 1 to 100 characters, no spaces or control characters.
    package static func operatorNameProblem(_ name: String) -> String? {
        let printable = name.unicodeScalars.allSatisfy {
            !$0.properties.isWhitespace && $0.value >= 0x20 && $0.value != 0x7F
        }
        return !name.isEmpty && name.count <= 100 && printable ? nil : "must be 1 to 100 characters without spaces"
    }

    /// Every operator, oldest first.
    package func operators() async throws(Failure) -> [OperatorRecord] {
        try await storeCall { try await store.operators() }
    }

    /// The operator named `reference`, or with that id.
    package func operatorRecord(_ reference: String) async throws(Failure) -> OperatorRecord {
        let all = try await operators()
        guard let found = all.first(where: { $0.name == reference }) ?? all.first(where: { $0.id == reference }) else {
            throw .operatorNotFound(reference)
        }
        return found
    }

    /// Creates an operator with `role`, records `operator.create`, and returns its token.
    package func createOperator(name: String, role: OperatorRole) async throws(Failure) -> CreatedOperator {
        if let problem = Self.operatorNameProblem(name) { throw .invalid([TenantRules.Violation(.name, problem)]) }
        let issued = OperatorTokens.issue()
        let created = OperatorRecord(
            id: issued.id, name: name, role: role, secretHash: issued.secretHash, createdAt: now())
        do {
            try await store.createOperator(created)
        } catch StoreError.duplicate {
            throw .operatorNameTaken(name)
        } catch {
            throw .storeUnavailable(detail: "\(error)")
        }
        let stored = try await storeCall { try await store.operatorRecord(id: created.id) } ?? created
        // Recorded before the token is shown; should that fail, the token was never shown and can be revoked.
        try await record(
            [.admin("operator.create", actor: audit.actor, time: now(), after: stored.auditSnapshot)],
            done: "operator \(name) was created (revoke it)")
        return CreatedOperator(record: stored, token: issued.key)
    }

    /// Revokes `record`'s token (a revoked one stays revoked) and records `operator.revoke`.
    package func revokeOperator(_ record: OperatorRecord) async throws(Failure) -> OperatorRecord {
        var revoked = record
        if revoked.revokedAt == nil {
            revoked.revokedAt = now()
            try await storeCall { try await store.updateOperator(revoked) }
            revoked = try await storeCall { try await store.operatorRecord(id: record.id) } ?? revoked
        }
        try await self.record(
            [
                .admin(
                    "operator.revoke", actor: audit.actor, time: now(), before: record.auditSnapshot,
                    after: revoked.auditSnapshot)
            ],
            done: "operator \(record.name) was revoked")
        return revoked
    }
}
