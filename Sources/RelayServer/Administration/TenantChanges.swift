import Foundation
import RelayCore
import RelayStore

/// The tenant fields of `POST /admin/v1/tenants` and `PATCH /admin/v1/tenants/{id}`, read and checked.
///
/// Every problem of a body is reported at once, each with its field path, like the push APIs' validation. A field
/// left out stays as it is (for creation: the defaults of ``Tenant`` and ``RateLimits``); `null` clears the fields
/// that may be absent (`allowedProviders`, `criticalChannel`, `note`) and is a type error for the others.
struct TenantChanges: Sendable, Equatable {
    var name: String?
    var rate: Double?
    var burst: Int?
    var dailyQuota: Int?
    var perDevicePerMinute: Int?
    var allowCriticalAlerts: Bool?
    /// `.some(nil)`: every provider.
    var allowedProviders: Set<Provider>??
    /// `.some(nil)`: the relay's `[android] critical_channel_id`.
    var criticalChannel: String??
    var note: String??
    /// Only with `PATCH`; creation has its own routes for this.
    var disabled: Bool?

    static let creationFields: Set<String> = [
        "name", "rate", "burst", "dailyQuota", "perDevicePerMinute", "allowCriticalAlerts", "allowedProviders",
        "criticalChannel", "note",
    ]
    static let updateFields = creationFields.union(["disabled"])

    static let maxNameLength = 100
    static let maxRate: Double = 1_000_000
    static let maxBurst = 1_000_000
    static let maxDailyQuota = 1_000_000_000
    static let maxPerDevicePerMinute = 1_000_000
    static let maxChannelLength = 256
    static let maxNoteLength = 1000

    /// Reads a request body.
    ///
    /// - Parameter creating: Whether this is `POST` (`name` required, `disabled` unknown) or `PATCH`.
    /// - Throws: ``RelayHTTPError`` 400 `VALIDATION_ERROR` with every problem and its path.
    static func parse(_ json: JSONValue, creating: Bool) throws(RelayHTTPError) -> TenantChanges {
        guard case .object(let object) = json else {
            throw AdminError.invalid("", "the request body must be a JSON object")
        }
        var reader = Reader(object: object)
        reader.rejectUnknown(creating ? creationFields : updateFields)
        var changes = TenantChanges()
        changes.name = reader.name(required: creating)
        changes.rate = reader.rate()
        changes.burst = reader.integer("burst", max: maxBurst)
        changes.dailyQuota = reader.integer("dailyQuota", max: maxDailyQuota)
        changes.perDevicePerMinute = reader.integer("perDevicePerMinute", max: maxPerDevicePerMinute)
        changes.allowCriticalAlerts = reader.bool("allowCriticalAlerts")
        changes.allowedProviders = reader.providers()
        changes.criticalChannel = reader.clearableString("criticalChannel", max: maxChannelLength)
        changes.note = reader.clearableString("note", max: maxNoteLength, allowsEmpty: true)
        if !creating { changes.disabled = reader.bool("disabled") }
        guard reader.issues.isEmpty else { throw RelayHTTPError(validation: ValidationFailure(issues: reader.issues)) }
        return changes
    }

    /// `tenant` with these changes.
    func applied(to tenant: Tenant) -> Tenant {
        var tenant = tenant
        if let name { tenant.name = name }
        if let rate { tenant.limits.ratePerSecond = rate }
        if let burst { tenant.limits.burst = burst }
        if let dailyQuota { tenant.limits.dailyQuota = dailyQuota }
        if let perDevicePerMinute { tenant.limits.perDevicePerMinute = perDevicePerMinute }
        if let allowCriticalAlerts { tenant.allowCriticalAlerts = allowCriticalAlerts }
        if let allowedProviders { tenant.allowedProviders = allowedProviders }
        if let criticalChannel { tenant.criticalChannel = criticalChannel }
        if let note { tenant.note = note }
        if let disabled { tenant.disabled = disabled }
        return tenant
    }

    /// Reads the fields of one object, collecting a ``ValidationIssue`` for every bad one.
    private struct Reader {
        let object: [String: JSONValue]
        var issues: [ValidationIssue] = []

        mutating func fail(_ field: String, _ message: String) {
            issues.append(ValidationIssue(path: JSONPath(field).description, message: message))
        }

        mutating func rejectUnknown(_ known: Set<String>) {
            for key in object.keys.sorted() where !known.contains(key) {
                var message = "unknown field '\(key)'"
                if let suggestion = NameSuggestion.closest(to: key, among: known, maxDistance: 2) {
                    message += "; did you mean '\(suggestion)'?"
                }
                issues.append(ValidationIssue(path: JSONPath(key).description, message: message))
            }
        }

        mutating func name(required: Bool) -> String? {
            guard let value = object["name"] else {
                if required { fail("name", "is required: a unique name of 1 to \(maxNameLength) characters") }
                return nil
            }
            guard case .string(let name) = value else {
                fail("name", "must be a string, not \(value.typeName)")
                return nil
            }
            guard !name.trimmingCharacters(in: .whitespaces).isEmpty, name.count <= maxNameLength else {
                fail("name", "must be 1 to \(maxNameLength) characters and not blank")
                return nil
            }
            guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                fail("name", "must not contain control characters")
                return nil
            }
            return name
        }

        mutating func rate() -> Double? {
            guard let value = object["rate"] else { return nil }
            guard let rate = value.numberValue else {
                fail("rate", "must be a number (notifications per second), not \(value.typeName)")
                return nil
            }
            guard rate > 0, rate <= maxRate else {
                fail("rate", "must be more than 0 and at most \(Int(maxRate))")
                return nil
            }
            return rate
        }

        mutating func integer(_ field: String, max: Int) -> Int? {
            guard let value = object[field] else { return nil }
            guard let number = value.integerValue else {
                fail(
                    field,
                    "must be an integer, not \(value.typeName == "a number" ? "a fractional number" : value.typeName)")
                return nil
            }
            guard number >= 1, number <= Int64(max) else {
                fail(field, "must be from 1 to \(max), not \(number)")
                return nil
            }
            return Int(number)
        }

        mutating func bool(_ field: String) -> Bool? {
            guard let value = object[field] else { return nil }
            guard case .bool(let flag) = value else {
                fail(field, "must be a boolean, not \(value.typeName)")
                return nil
            }
            return flag
        }

        mutating func providers() -> Set<Provider>?? {
            let names = Provider.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", ")
            switch object["allowedProviders"] {
            case nil: return .none
            case .null?: return .some(nil)
            case .array(let elements)?:
                guard !elements.isEmpty else {
                    fail("allowedProviders", "must name at least one provider (null allows every provider)")
                    return .none
                }
                var providers = Set<Provider>()
                var valid = true
                for (index, element) in elements.enumerated() {
                    guard let provider = element.stringValue.flatMap(Provider.init(rawValue:)) else {
                        let path = JSONPath("allowedProviders").appending(index).description
                        issues.append(ValidationIssue(path: path, message: "must be one of \(names)"))
                        valid = false
                        continue
                    }
                    providers.insert(provider)
                }
                return valid ? .some(providers) : .none
            case let other?:
                fail("allowedProviders", "must be null (every provider) or an array of \(names), not \(other.typeName)")
                return .none
            }
        }

        mutating func clearableString(_ field: String, max: Int, allowsEmpty: Bool = false) -> String?? {
            switch object[field] {
            case nil: return .none
            case .null?: return .some(nil)
            case .string(let text)?:
                guard allowsEmpty || !text.isEmpty, text.count <= max else {
                    fail(
                        field,
                        allowsEmpty
                            ? "must be at most \(max) characters" : "must be 1 to \(max) characters (null for none)")
                    return .none
                }
                return .some(text)
            case let other?:
                fail(field, "must be a string or null, not \(other.typeName)")
                return .none
            }
        }
    }
}
