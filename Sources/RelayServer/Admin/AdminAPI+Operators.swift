import Foundation
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

/// `/admin/v1/operators` (list, create, revoke) and `GET /admin/v1/keys/{keyID}`: the operators' own tokens, and
/// which tenant a key belongs to, for an operator holding only a key id (from a log line or an audit record).
extension AdminAPI {
    /// `GET /admin/v1/operators`: every operator, never a token or its hash. Auditors may list.
    func listOperators(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .read)
        let operators = try await administering { try await administration.operators() }
        return jsonResponse(AdminJSON.list(operators.map(AdminJSON.operatorRecord)))
    }

    /// `POST /admin/v1/operators` with `{"name": …, "role": "admin" | "auditor"}`: 201 with the token, shown once.
    func createOperator(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        let body = try await readJSONBody(request, limit: relay.settings.maxBodyBytes)
        guard case .string(let name)? = body.objectValue?["name"] else {
            throw AdminError.invalid("name", "required: a string of 1 to 100 characters without spaces")
        }
        guard case .string(let roleText)? = body.objectValue?["role"], let role = OperatorRole(rawValue: roleText)
        else {
            throw AdminError.invalid("role", "required: \"admin\" or \"auditor\"")
        }
        let created = try await administering { try await administration.createOperator(name: name, role: role) }
        return jsonResponse(AdminJSON.createdOperator(created), status: .created)
    }

    /// `DELETE /admin/v1/operators/{name}` (a name or an id): revokes the operator's token.
    func revokeOperator(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .write)
        let reference = Self.pathParameter("name", context)
        let revoked = try await administering {
            try await administration.revokeOperator(try await administration.operatorRecord(reference))
        }
        return jsonResponse(AdminJSON.operatorRecord(revoked))
    }

    /// `GET /admin/v1/keys/{keyID}`: the key (id or whole key) and its tenant's id and name.
    func findKey(_ request: Request, context: AdminRequestContext) async throws -> Response {
        let administration = try self.administration(context, access: .read)
        let reference = Self.pathParameter("keyID", context)
        let (key, tenant) = try await administering {
            let key = try await administration.key(reference)
            return (key, try await administration.owner(of: key))
        }
        return jsonResponse(AdminJSON.key(key, of: tenant, at: now()))
    }
}
