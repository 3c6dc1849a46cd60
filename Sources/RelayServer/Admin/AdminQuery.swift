import Foundation
import Hummingbird
import HummingbirdCore
import RelayApplication
import RelayCore

/// Reads the query parameters of an admin `GET`, collecting a problem for every bad one; ``finish()`` throws them
/// all at once, each named by its parameter (the `path` of a 400 `VALIDATION_ERROR`).
///
/// An unknown parameter is an error (a typo such as `tenantID=` would otherwise silently widen a query), as is a
/// parameter given twice; an empty value counts as absent.
struct AdminQuery {
    private var values: [String: String] = [:]
    private(set) var issues: [ValidationIssue] = []

    init(_ pairs: [(key: String, value: String)], allowed: Set<String>) {
        var seen: Set<String> = []
        for (key, value) in pairs {
            guard allowed.contains(key) else {
                var message = "unknown query parameter '\(key)'"
                if let suggestion = NameSuggestion.closest(to: key, among: allowed, maxDistance: 2) {
                    message += "; did you mean '\(suggestion)'?"
                }
                issues.append(ValidationIssue(path: key, message: message))
                continue
            }
            guard seen.insert(key).inserted else {
                issues.append(ValidationIssue(path: key, message: "is given more than once"))
                continue
            }
            if !value.isEmpty { values[key] = value }
        }
    }

    init(_ request: Request, allowed: Set<String>) {
        self.init(request.uri.queryParameters.map { (key: String($0.key), value: String($0.value)) }, allowed: allowed)
    }

    mutating func fail(_ name: String, _ message: String) {
        issues.append(ValidationIssue(path: name, message: message))
    }

    func string(_ name: String) -> String? { values[name] }

    mutating func integer(_ name: String, in range: ClosedRange<Int>) -> Int? {
        guard let text = values[name] else { return nil }
        guard let value = Int64(text) else {
            fail(name, TenantRules.notAnInteger(in: range))
            return nil
        }
        if let problem = TenantRules.problem(value, in: range) {
            fail(name, problem)
            return nil
        }
        return Int(value)
    }

    mutating func bool(_ name: String) -> Bool? {
        switch values[name] {
        case nil: return nil
        case "true": return true
        case "false": return false
        default:
            fail(name, "must be true or false")
            return nil
        }
    }

    /// An ISO 8601 time with a zone (`2027-01-15T08:00:00Z`; an offset's `+` written `%2B`) or a UTC day
    /// (`2027-01-15`, meaning its midnight), as the command-line tools read them (``AuditTimeArgument``).
    mutating func date(_ name: String) -> Date? {
        guard let text = values[name] else { return nil }
        guard let date = AuditTimeArgument.parse(text) else {
            fail(name, "must be " + AuditTimeArgument.expected)
            return nil
        }
        return date
    }

    mutating func event(_ name: String) -> AuditEvent? {
        guard let text = values[name] else { return nil }
        guard let event = AuditEvent(rawValue: text) else {
            fail(name, "must be one of " + AuditEvent.allCases.map { "'\($0.rawValue)'" }.joined(separator: ", "))
            return nil
        }
        return event
    }

    /// Throws every problem found so far.
    func finish() throws(RelayHTTPError) {
        guard issues.isEmpty else { throw RelayHTTPError(validation: ValidationFailure(issues: issues)) }
    }
}
