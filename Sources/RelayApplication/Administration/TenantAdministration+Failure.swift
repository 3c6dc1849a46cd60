extension TenantAdministration {
    /// Why an administration action did nothing (or, for ``auditNotStored``, did it without its audit record).
    ///
    /// Each front end renders these its own way: the admin API as a status and code (``AdminError``), the command
    /// line as `Error: <description>`. ``message`` is the same sentence for both. No message ever repeats a key's
    /// secret: a key is named by its id only, and a reference that is neither an id nor a whole key is not repeated.
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Values that break ``TenantRules``, every one at once.
        case invalid([TenantRules.Violation])
        /// No tenant with this id or name.
        case tenantNotFound(String)
        /// No key with this id (for the admin API: none of the tenant in the path); `nil`: the reference was neither a
        /// key id nor a whole key, and is not repeated.
        case keyNotFound(id: String?)
        /// A deleted tenant cannot be changed or get keys.
        case tenantDeleted(String)
        /// The name is taken, by a tenant or a deleted one.
        case nameTaken(String)
        /// The key to rotate is revoked or expired.
        case keyNotActive(String)
        /// The tenant already has ``KeyLifecycle/maxActiveKeys`` active keys.
        case tooManyActiveKeys(tenant: String, count: Int)
        /// No operator with this name or id.
        case operatorNotFound(String)
        /// An operator with this name exists (revoked ones keep their names).
        case operatorNameTaken(String)
        /// The store failed; `detail` is its error, for the command line (the API does not show it).
        case storeUnavailable(detail: String)
        /// The change is stored but its audit record is not: `done` says what was done.
        case auditNotStored(action: String, done: String, detail: String)

        /// The sentence a caller is shown.
        package var message: String {
            switch self {
            case .invalid(let violations):
                violations.map(\.description).joined(separator: "; ")
            case .tenantNotFound(let reference):
                "No tenant with the id or name '\(Self.shown(reference))'."
            case .keyNotFound(let id?):
                "No key with the id '\(Self.shown(id))'."
            case .keyNotFound(nil):
                "No such key: give a key id (16 hexadecimal digits) or the whole key (prk_<id>_<secret>)."
            case .tenantDeleted(let name):
                "The tenant '\(Self.shown(name))' is deleted; it can no longer be changed or get keys."
            case .nameTaken(let name):
                "A tenant named '\(Self.shown(name))' already exists (deleted tenants keep their names); "
                    + "choose another name."
            case .keyNotActive(let id):
                "The key \(id) is revoked or expired; issue a new key instead of rotating it."
            case .tooManyActiveKeys(let tenant, let count):
                "Tenant '\(Self.shown(tenant))' already has \(count) active keys (the most allowed); "
                    + "revoke or rotate one first."
            case .operatorNotFound(let reference):
                "No operator with the name or id '\(Self.shown(reference))'."
            case .operatorNameTaken(let name):
                "An operator named '\(Self.shown(name))' already exists (revoked operators keep their names)."
            case .storeUnavailable:
                "The relay's store is unavailable."
            case .auditNotStored:
                "The change was stored, but its audit record could not be written; check the relay's store and logs."
            }
        }

        /// ``message``, with the store's own error where there is one.
        package var description: String {
            switch self {
            case .storeUnavailable(let detail): "The relay's store is unavailable: \(detail)"
            case .auditNotStored(let action, let done, let detail):
                "\(done), but its audit record (\(action)) could not be written: \(detail)"
            default: message
            }
        }

        /// A caller's reference as echoed in a message: cut short, so a message never grows with what was sent.
        static func shown(_ reference: String) -> String {
            reference.count <= 100 ? reference : String(reference.prefix(100)) + "…"
        }
    }
}
