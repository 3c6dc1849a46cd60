import Foundation
import RelayApplication
import RelayCore
import RelayStore

/// The tenant fields of `POST /admin/v1/tenants` and `PATCH /admin/v1/tenants/{id}`, read and checked.
///
/// Every problem of a body is reported at once, each with its field path, like the push APIs' validation. This reads
/// the JSON types (`null` clears `allowedProviders`, `criticalChannel` and `note`, and is a type error for the other
/// fields); what a value may be is ``TenantRules``', asked field by field so that the problems come in field order.
extension TenantChanges {
    static let creationFields: Set<String> = [
        "name", "rate", "burst", "dailyQuota", "perDevicePerMinute", "criticalReservePerHour", "allowCriticalAlerts",
        "allowedProviders", "criticalChannel", "apps", "defaultApp", "note",
    ]
    static let updateFields = creationFields.union(["disabled"])

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
        changes.burst = reader.integer(.burst, in: TenantRules.burst)
        changes.dailyQuota = reader.integer(.dailyQuota, in: TenantRules.dailyQuota)
        changes.perDevicePerMinute = reader.integer(.perDevicePerMinute, in: TenantRules.perDevicePerMinute)
        changes.criticalReservePerHour = reader.integer(
            .criticalReservePerHour, in: TenantRules.criticalReservePerHour)
        changes.allowCriticalAlerts = reader.bool(.allowCriticalAlerts)
        changes.allowedProviders = reader.providers()
        changes.criticalChannel = reader.clearableString(.criticalChannel, TenantRules.problem(criticalChannel:))
        changes.apps = reader.apps()
        changes.defaultApp = reader.string(.defaultApp, TenantRules.problem(appName:))
        changes.note = reader.clearableString(.note, TenantRules.problem(note:))
        if !creating { changes.disabled = reader.bool(.disabled) }
        guard reader.issues.isEmpty else { throw RelayHTTPError(validation: ValidationFailure(issues: reader.issues)) }
        return changes
    }

    /// Reads the fields of one object, collecting a ``ValidationIssue`` for every bad one.
    private struct Reader {
        let object: [String: JSONValue]
        var issues: [ValidationIssue] = []

        mutating func fail(_ field: TenantRules.Field, _ message: String) {
            issues.append(ValidationIssue(path: JSONPath(field.rawValue).description, message: message))
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
                if required { fail(.name, TenantRules.nameRequired) }
                return nil
            }
            guard case .string(let name) = value else {
                fail(.name, "must be a string, not \(value.typeName)")
                return nil
            }
            return checked(.name, name, TenantRules.problem(name:))
        }

        mutating func rate() -> Double? {
            guard let value = object["rate"] else { return nil }
            guard let rate = value.numberValue else {
                fail(.rate, "must be a number (notifications per second), not \(value.typeName)")
                return nil
            }
            return checked(.rate, rate, TenantRules.problem(rate:))
        }

        mutating func integer(_ field: TenantRules.Field, in range: ClosedRange<Int>) -> Int? {
            guard let value = object[field.rawValue] else { return nil }
            guard let number = value.integerValue else {
                fail(
                    field,
                    "must be an integer, not \(value.typeName == "a number" ? "a fractional number" : value.typeName)")
                return nil
            }
            return checked(field, number) { TenantRules.problem($0, in: range) }.map { Int($0) }
        }

        mutating func bool(_ field: TenantRules.Field) -> Bool? {
            guard let value = object[field.rawValue] else { return nil }
            guard case .bool(let flag) = value else {
                fail(field, "must be a boolean, not \(value.typeName)")
                return nil
            }
            return flag
        }

        mutating func providers() -> Set<Provider>?? {
            switch object["allowedProviders"] {
            case nil: return .none
            case .null?: return .some(nil)
            case .array(let elements)?:
                var providers = Set<Provider>()
                var valid = true
                for (index, element) in elements.enumerated() {
                    guard let provider = element.stringValue.flatMap(TenantRules.provider(named:)) else {
                        let path = JSONPath("allowedProviders").appending(index).description
                        issues.append(ValidationIssue(path: path, message: TenantRules.unknownProvider))
                        valid = false
                        continue
                    }
                    providers.insert(provider)
                }
                guard valid else { return .none }
                return checked(.allowedProviders, providers, TenantRules.problem(allowedProviders:)).map { .some($0) }
            case let other?:
                fail(
                    .allowedProviders,
                    "must be null (every provider) or an array of provider names, not \(other.typeName)")
                return .none
            }
        }

        /// `apps`: an array of app names.
        mutating func apps() -> [String]? {
            switch object["apps"] {
            case nil: return nil
            case .array(let elements)?:
                var apps: [String] = []
                for (index, element) in elements.enumerated() {
                    let path = JSONPath("apps").appending(index).description
                    guard let name = element.stringValue else {
                        issues.append(ValidationIssue(path: path, message: "must be a string, not \(element.typeName)"))
                        continue
                    }
                    apps.append(name)
                }
                guard apps.count == elements.count else { return nil }
                // The names' rules are the list's, named `apps` as the command line's `--allow-app` is.
                return checked(.apps, apps, TenantRules.problem(apps:))
            case let other?:
                fail(.apps, "must be an array of app names, not \(other.typeName)")
                return nil
            }
        }

        /// A string field that cannot be cleared.
        mutating func string(_ field: TenantRules.Field, _ problem: (String) -> String?) -> String? {
            switch object[field.rawValue] {
            case nil: return nil
            case .string(let text)?: return checked(field, text, problem)
            case let other?:
                fail(field, "must be a string, not \(other.typeName)")
                return nil
            }
        }

        mutating func clearableString(_ field: TenantRules.Field, _ problem: (String) -> String?) -> String?? {
            switch object[field.rawValue] {
            case nil: return .none
            case .null?: return .some(nil)
            case .string(let text)?: return checked(field, text, problem).map { .some($0) }
            case let other?:
                fail(field, "must be a string or null, not \(other.typeName)")
                return .none
            }
        }

        /// `value` if ``TenantRules`` finds nothing wrong with it; else `nil`, with the rule's problem recorded.
        private mutating func checked<Value>(_ field: TenantRules.Field, _ value: Value, _ problem: (Value) -> String?)
            -> Value?
        {
            if let message = problem(value) {
                fail(field, message)
                return nil
            }
            return value
        }
    }
}
