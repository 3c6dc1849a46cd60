import Foundation
import HTTPTypes
import Hummingbird
import RelayApplication
import RelayCore
import RelayStore

/// `GET /v1/whoami`: the caller's tenant, key, limits with what is left of them, and apps, as
/// ``TenantSelfDescription`` tells them; never the key's secret.
struct WhoamiAPI: Sendable {
    let relay: Relay

    func addRoutes(to router: RouterGroup<TenantRequestContext>) {
        router.get("/v1/whoami") { _, context in try await whoami(context: context) }
    }

    func whoami(context: TenantRequestContext) async throws -> Response {
        let description: TenantSelfDescription
        do {
            description = try await relay.whoami(identity: context.identity)
        } catch .receiptLookupsExhausted(let retryAfter) {
            throw RelayHTTPError(
                .tooManyRequests,
                code: .tooManyRequests,
                message:
                    "Too many lookups; retry after \(retryAfter) s. whoami shares a budget with receipt lookups and dry runs, and never uses up pushes.",
                headers: [.retryAfter: String(retryAfter)]
            )
        } catch {
            throw RelayHTTPError(error)
        }
        return jsonResponse(description.json)
    }
}

extension TenantSelfDescription {
    /// `{"tenant", "key", "criticalAlerts", "limits", "left", "apps", "relayVersion"}`; times in ISO 8601 UTC.
    var json: JSONValue {
        .object([
            "tenant": .object(["id": .string(tenantID), "name": .string(tenantName)]),
            "key": .object([
                "id": .string(key.id),
                "createdAt": AdminJSON.time(key.createdAt),
                "expiresAt": key.expiresAt.map(AdminJSON.time) ?? .null,
            ]),
            "criticalAlerts": .object([
                "allowed": .bool(criticalAlerts.allowed),
                "channel": .string(criticalAlerts.channel),
                "reservePerHour": .int(Int64(criticalAlerts.reservePerHour)),
                "reserveLeftThisHour": .int(Int64(criticalAlerts.reserveLeftThisHour)),
                "perDevicePerMinute": .int(Int64(criticalAlerts.perDevicePerMinute)),
            ]),
            "limits": limits.json,
            "left": .object([
                "bucket": .int(Int64(left.bucket)),
                "dailyQuota": .int(Int64(left.dailyQuota)),
                "criticalReserve": .int(Int64(left.criticalReserve)),
            ]),
            "apps": .array(apps.map(\.json)),
            "relayVersion": .string(relayVersion),
        ])
    }
}

extension TenantSelfDescription.App {
    /// `name`, `default`, `providers`, and `apns` (`topic`, `environment`) and `fcm` (`projectId`) when the app
    /// sends through them.
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "name": .string(name),
            "default": .bool(isDefault),
            "providers": .array(providers.map { .string($0.rawValue) }),
        ]
        if let apns {
            fields["apns"] = .object(["topic": .string(apns.topic), "environment": .string(apns.environment.rawValue)])
        }
        if let fcmProjectID { fields["fcm"] = .object(["projectId": .string(fcmProjectID)]) }
        return .object(fields)
    }
}
