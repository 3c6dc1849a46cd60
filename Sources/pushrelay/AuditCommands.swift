import ArgumentParser
import Foundation
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `pushrelay audit …`: reading, checking, exporting, pruning and archiving the tamper-evident audit log
/// (Docs/auditors.md).
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract:
            "Query, verify, export, prune and archive the audit log; make its signing key or show its public half.",
        subcommands: [
            Query.self, Verify.self, Export.self, Keygen.self, PublicKey.self, Prune.self, Archive.self,
        ]
    )

    struct Query: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the audit records that match, oldest first.",
            discussion: """
                Every filter given must hold. --since is inclusive and --until exclusive; a day (2027-01-15) means its \
                midnight UTC, so --since 2027-01-14 --until 2027-01-15 is all of 14 January. For review only: use \
                `audit export` for something an auditor can verify.
                """
        )
        @Option(help: "Only this tenant's records (its name, or its id).") var tenant: String?
        @Option(help: ArgumentHelp("From this time on: \(AuditTimeArgument.expected).", valueName: "time"))
        var since: String?
        @Option(help: ArgumentHelp("Before this time.", valueName: "time")) var until: String?
        @Option(help: "Only this outcome: ok, DeviceNotRegistered, TOO_MANY_REQUESTS, tenant.update, …")
        var outcome: String?
        @Option(help: "Only critical (true) or only non-critical (false) notifications.") var critical: Bool?
        @Option(help: "Only this event: push, refused, admin, retention or dryRun.") var event: String?
        @Option(help: "jsonl, csv or table (default: table; --json means jsonl).") var format: String?
        @Option(help: "At most this many records.") var limit: Int?
        @OptionGroup var options: StoreOptions

        func validate() throws {
            _ = try times()
            if let event, AuditEvent(rawValue: event) == nil {
                throw ValidationError("--event must be push, refused, admin, retention or dryRun, not '\(event)'")
            }
            _ = try renderFormat()
            if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        }

        func times() throws -> (since: Date?, until: Date?) {
            let range = (
                try since.map { try parseTime($0, option: "--since") },
                try until.map { try parseTime($0, option: "--until") }
            )
            if let from = range.0, let to = range.1, from >= to {
                throw ValidationError("--until must be later than --since")
            }
            return range
        }

        func renderFormat() throws -> AuditFormat {
            guard let format else { return options.json ? .jsonl : .table }
            guard let parsed = AuditFormat(rawValue: format.lowercased()) else {
                throw ValidationError("--format must be jsonl, csv or table, not '\(format)'")
            }
            return parsed
        }

        func run() async throws {
            let (_, store) = try await openStore(options)
            let (since, until) = try times()
            var tenantID: String?
            if let tenant {
                if let named = try await store.tenant(named: tenant) {
                    tenantID = named.id
                } else if let byID = try await store.tenant(id: tenant) {
                    tenantID = byID.id
                } else {
                    throw CLIError("no tenant named (or with id) '\(tenant)'")
                }
            }
            let filter = AuditFilter(
                tenantID: tenantID, since: since, until: until, outcome: outcome, critical: critical,
                event: event.flatMap(AuditEvent.init(rawValue:))
            )
            let query = AuditQuery(store: store, filter: filter, format: try renderFormat(), limit: limit)
            let count = try await query.run { print($0) }
            if count == 0 { printError("No audit records match.") }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that the audit log (or an export file) has not been altered.",
            discussion: """
                Without --export, walks every chain in the store (or --chain) and checks every link and every stored \
                checkpoint; with --public-key (default: the public half of [audit] signing_key_file) checkpoint \
                signatures are checked too. With --export FILE, checks an export file with the public key alone, \
                without a store or a configuration file; every section must end on a signed checkpoint. With \
                --archive FILE (repeated for several archives), checks each archive file like an export, then that \
                the archives and the store form one chain each: every archive starts where the one before it ends, \
                and the store's chain continues from the last archived record (its seq + 1, linked onto its link).
                Exit status: 0 intact, 1 altered (the message names the chain and the seq), 2 usage or configuration \
                error.
                """
        )
        @Option(help: "Only this chain.") var chain: String?
        @Option(
            name: .customLong("public-key"),
            help: ArgumentHelp("The auditor's public key: base64, or a file holding it.", valueName: "key")
        )
        var publicKey: String?
        @Option(help: ArgumentHelp("Verify this export file instead of the store.", valueName: "file"))
        var export: String?
        @Option(
            name: .customLong("archive"),
            help: ArgumentHelp(
                "An archive file (audit archive) to verify with the store: the live chains must continue it; repeat "
                    + "for each archive.",
                valueName: "file")
        )
        var archives: [String] = []
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let intact: Bool
            do {
                if !archives.isEmpty {
                    intact = try await verifyArchives()
                } else if let export {
                    intact = try verifyExport(export)
                } else {
                    intact = try await verifyStore()
                }
            } catch let code as ExitCode {
                throw code
            } catch {
                printError("Error: \(error)")
                throw ExitCode(2)
            }
            if !intact { throw ExitCode(1) }
        }

        private func verifyExport(_ path: String) throws -> Bool {
            guard let publicKey else {
                throw CLIError("--export needs --public-key: an export is verified with the signing key's public half")
            }
            if chain != nil { throw CLIError("--chain applies to the store, not to --export") }
            let key = try readPublicKey(publicKey)
            let result = try AuditExportCheck.verify(fileAt: path, publicKey: key)
            if options.json {
                var fields: [String: JSONValue] = [
                    "intact": .bool(result.isIntact), "file": .string(path), "keyID": .string(key.keyID),
                    "sections": .array(result.sections.map(\.json)),
                ]
                if let unreadable = result.unreadable {
                    fields["unreadable"] = .object([
                        "line": .int(Int64(unreadable.line)), "message": .string(unreadable.description),
                    ])
                }
                printJSON(.object(fields))
            } else {
                for line in AuditExportCheck.report(result) { print(line) }
                print(result.isIntact ? "Export intact (key \(key.keyID))." : "Export NOT intact.")
                for section in result.sections where section.isIntact && section.exportCheckpointsVerified > 0 {
                    printError(
                        "note: chain \(section.chain): its end was signed when the file was exported, not by the "
                            + "relay as the records were written (relay checkpoints: \(section.checkpointsVerified))")
                }
            }
            return result.isIntact
        }

        private func verifyStore() async throws -> Bool {
            let (configuration, store) = try await openStore(options)
            var key = try publicKey.map(readPublicKey)
            if key == nil, let own = configuration.audit.auditSigningKey?.publicKey {
                key = own
                if !options.json {
                    print("Checking signatures with the configured signing key's public half (\(own.keyID)).")
                }
            } else if key == nil, !options.json {
                print("No public key: checkpoints are compared with the records, but their signatures are not checked.")
            }
            let results = try await verifyChains(of: store, publicKey: key)
            let intact = results.allSatisfy(\.isIntact)
            if options.json {
                printJSON(.object(["intact": .bool(intact), "chains": .array(results.map(\.json))]))
            } else if results.isEmpty {
                print("The audit log is empty.")
            } else {
                print(
                    intact
                        ? "Audit log intact (\(results.count) chain\(results.count == 1 ? "" : "s"))."
                        : "Audit log NOT intact.")
            }
            return intact
        }

        /// Verifies every chain of the store (or `--chain`), printing a line per chain unless `--json`.
        private func verifyChains(of store: any PushStore, publicKey key: AuditPublicKey?) async throws
            -> [AuditVerification]
        {
            let known = try await store.auditChains()
            let chains: [String]
            if let chain {
                guard known.contains(chain) else {
                    throw CLIError(
                        "no audit chain '\(chain)' (chains: \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
                }
                chains = [chain]
            } else {
                chains = known
            }
            let progress = TerminalProgress()
            var results: [AuditVerification] = []
            for chain in chains {
                let total = try await Self.recordCount(of: chain, in: store)
                let verification = try await store.verifyAuditChain(chain, publicKey: key) { done in
                    progress.show(ProgressBar.line(label: "chain \(chain)", done: done, total: total))
                }
                progress.clear()
                results.append(verification)
                if !options.json {
                    print(AuditVerificationReport.line(for: verification))
                    if let warning = AuditVerificationReport.warning(for: verification, keyKnown: key != nil) {
                        printError(warning)
                    }
                }
            }
            return results
        }

        /// `--archive`: each archive file on its own, then its sections joined with each other and with the
        /// store's chains, then the store's chains.
        private func verifyArchives() async throws -> Bool {
            if export != nil { throw CLIError("--archive and --export: give one or the other") }
            let (configuration, store) = try await openStore(options)
            guard let key = try publicKey.map(readPublicKey) ?? configuration.audit.auditSigningKey?.publicKey else {
                throw CLIError(
                    "--archive needs the signing key's public half: --public-key, or [audit] signing_key_file in the "
                        + "configuration")
            }
            let files = try archives.map { path in
                do {
                    return try AuditArchiveFile.read(path: path, publicKey: key)
                } catch {
                    throw CLIError("--archive \(path): \(error)")
                }
            }
            if !options.json {
                for file in files {
                    print("archive \(file.path) (sha256 \(file.sha256)):")
                    for line in AuditExportCheck.report(file.result) { print("  " + line) }
                }
            }
            let joins = try await AuditArchiveCheck.join(files, store: store, chains: chain.map { [$0] })
            if !options.json {
                for join in joins {
                    print(join.line)
                    for note in join.notes { printError("note: " + note) }
                }
            }
            let results = try await verifyChains(of: store, publicKey: key)
            let intact =
                files.allSatisfy(\.result.isIntact) && joins.allSatisfy(\.isJoined) && results.allSatisfy(\.isIntact)
            if options.json {
                printJSON(
                    .object([
                        "intact": .bool(intact), "keyID": .string(key.keyID),
                        "archives": .array(files.map(\.json)), "joins": .array(joins.map(\.json)),
                        "chains": .array(results.map(\.json)),
                    ]))
            } else {
                print(
                    intact
                        ? "Archives and audit log intact, joined (key \(key.keyID))."
                        : "Archives and audit log NOT intact.")
            }
            return intact
        }

        /// About how many records a chain holds, for the progress bar.
        static func recordCount(of chain: String, in store: any PushStore) async throws -> Int {
            let start = try await store.auditAnchor(chain: chain)?.seq ?? 0
            let head = try await store.auditHead(chain: chain)?.seq ?? start
            return Int(clamping: max(0, head - start))
        }
    }
}

extension AuditCommand {
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the audit records of a time range in the verifiable export format (JSON Lines).",
            discussion: """
                The range is taken from every chain, for all tenants: each chain's records between --since and \
                --until, contiguous, with the record before them as the anchor. Records cannot be filtered by tenant \
                (leaving records out would break the chain and the export would no longer verify); filter after \
                verifying, or use `audit query --tenant` to read. With [audit] signing_key_file set, each chain's part \
                ends on a checkpoint signed now, so the file verifies to its end with the public key alone: \
                pushrelay audit verify --export FILE --public-key KEY. The stored chain is verified first: an altered \
                log is neither exported nor signed.
                """
        )
        @Option(help: ArgumentHelp("From this time on: \(AuditTimeArgument.expected).", valueName: "time"))
        var since: String
        @Option(help: ArgumentHelp("Before this time (default: now).", valueName: "time")) var until: String?
        @Option(help: ArgumentHelp("The file to write.", valueName: "file")) var out: String
        @OptionGroup var options: StoreOptions

        func validate() throws {
            let from = try parseTime(since, option: "--since")
            if let until, try parseTime(until, option: "--until") <= from {
                throw ValidationError("--until must be later than --since")
            }
        }

        func run() async throws {
            let (configuration, store) = try await openStore(options)
            let from = try parseTime(since, option: "--since")
            // Without --until the range ends now, so records written while the export runs are left for the next.
            let to = try until.map { try parseTime($0, option: "--until") } ?? Date()
            let signingKey = configuration.audit.auditSigningKey
            if signingKey == nil {
                printError(
                    "Warning: no [audit] signing_key_file, so nothing new is signed: each chain's part is covered only "
                        + "up to its last stored checkpoint, and verification will report the rest as unsigned."
                )
            }
            let export = AuditExport(store: store, since: from, until: to, signingKey: signingKey)
            let writer = try LineFileWriter(path: out)
            let progress = TerminalProgress()
            let sections: [AuditExport.Section]
            do {
                sections = try await export.write(to: writer.write) { step in
                    progress.show(ProgressBar.line(label: "chain \(step.chain)", done: step.walked, total: step.total))
                }
                progress.clear()
                try writer.finish()
            } catch {
                progress.clear()
                writer.abandon()
                throw CLIError("\(error)")
            }
            if options.json {
                printJSON(
                    .object([
                        "file": .string(out),
                        "publicKey": signingKey.map { .string($0.publicKey.base64) } ?? .null,
                        "sections": .array(sections.map(\.json)),
                    ]))
                return
            }
            if sections.isEmpty { print("No audit records in that range; \(out) holds no section.") }
            for section in sections {
                let span =
                    section.firstSeq == section.lastSeq
                    ? "record \(section.firstSeq)" : "records \(section.firstSeq)…\(section.lastSeq)"
                let end =
                    !section.signedEnd
                    ? ", end NOT signed" : section.signedAtExport ? ", end signed now (at export)" : ""
                print(
                    "chain \(section.chain): \(span) (\(section.records)), anchor seq \(section.anchor.seq), "
                        + "\(section.checkpoints) checkpoint(s)\(end)"
                )
            }
            print("Wrote \(out).")
            if let signingKey {
                print(
                    "Verify it with: pushrelay audit verify --export \(out) --public-key \(signingKey.publicKey.base64)"
                )
            }
        }
    }

    struct Keygen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a new audit signing key and print its public half for auditors.",
            discussion: """
                With --out, writes the base64 private key to a new file readable by its owner only (mode 0600; an \
                existing file is never overwritten); point [audit] signing_key_file at it. Without --out, prints the \
                private key once. Give auditors the public key; keep the private key off the store's host if you can.
                """
        )
        @Option(help: ArgumentHelp("Write the private key to this new file.", valueName: "file")) var out: String?
        @Flag(name: .long, help: "Print machine-readable JSON.") var json = false

        func run() async throws {
            let key = AuditSigningKey.generate()
            if let out { try writeSecretFile(out, contents: key.base64 + "\n") }
            if json {
                var fields: [String: JSONValue] = [
                    "publicKey": .string(key.publicKey.base64), "keyID": .string(key.publicKey.keyID),
                ]
                if let out { fields["file"] = .string(out) } else { fields["privateKey"] = .string(key.base64) }
                printJSON(.object(fields))
                return
            }
            if let out {
                print(
                    "Wrote the audit signing key to \(out) (mode 0600). In relay.conf: [audit] "
                        + "signing_key_file = \"\(out)\""
                )
            } else {
                print("Private signing key (shown once; put it in a file for [audit] signing_key_file):")
                print(key.base64)
            }
            print("Public key (give it to auditors):")
            print(key.publicKey.base64)
            print("Key id: \(key.publicKey.keyID)")
        }
    }

    /// `audit pubkey`: the public half of an existing signing key, for auditors, without printing the private key.
    struct PublicKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pubkey",
            abstract: "Print the public key and key id of an existing audit signing key.",
            discussion: """
                Reads the base64 private key that [audit] signing_key_file names (or --key-file) and prints its \
                public half on standard output, alone, so that `pushrelay audit pubkey > audit-public.key` makes the \
                file auditors pass to `audit verify --public-key`; the key id goes to standard error. The private key \
                is never printed.
                """
        )
        @Option(
            name: .customLong("key-file"),
            help: ArgumentHelp("The signing key file (default: [audit] signing_key_file).", valueName: "file")
        )
        var keyFile: String?
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let key: AuditSigningKey
            if let keyFile {
                guard let data = FileManager.default.contents(atPath: keyFile) else {
                    throw CLIError("cannot read \(keyFile)")
                }
                do {
                    key = try AuditSigningKey(base64: String(decoding: data, as: UTF8.self))
                } catch {
                    throw CLIError("\(keyFile) holds no audit signing key: \(error)")
                }
            } else {
                let configuration = try loadConfiguration(options.config)
                guard let configured = configuration.audit.auditSigningKey else {
                    throw CLIError("no --key-file, and the configuration sets no [audit] signing_key_file")
                }
                key = configured
            }
            if options.json {
                printJSON(
                    .object([
                        "publicKey": .string(key.publicKey.base64), "keyID": .string(key.publicKey.keyID),
                    ]))
            } else {
                // The key alone on standard output, so that it can be redirected into a file for --public-key.
                print(key.publicKey.base64)
                printError("Key id: \(key.publicKey.keyID)")
            }
        }
    }

    struct Prune: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete audit records older than [audit] retention_days, from every chain.",
            discussion: """
                Each chain loses only its oldest records, up to the newest one older than the limit; with a signing \
                key that record is first signed, and it stays as the chain's anchor, so what remains still verifies. \
                Each pruning is itself recorded (event retention) in this instance's command-line chain. Running relays \
                prune their own chains once a day.
                """
        )
        @Flag(name: .customLong("dry-run"), help: "Only say what would be deleted.") var dryRun = false
        @OptionGroup var options: StoreOptions

        func run() async throws {
            let (configuration, store, audit) = try await openAdminStore(options)
            let retention = AuditRetention(
                store: store, retention: configuration.audit.retention, signingKey: configuration.audit.auditSigningKey
            )
            let now = Date()
            let plans = try await retention.run(now: now, dryRun: dryRun)
            if !dryRun, !plans.isEmpty {
                let entries = plans.map {
                    AuditRetention.entry(
                        for: $0, actor: audit.writer.actor, retentionDays: configuration.audit.retentionDays, time: now
                    )
                }
                do {
                    try await audit.writer.append(entries)
                } catch {
                    throw CLIError(
                        "old audit records were pruned, but the retention records could not be written: \(error)")
                }
            }
            if options.json {
                printJSON(.object(["dryRun": .bool(dryRun), "chains": .array(plans.map(\.json))]))
                return
            }
            if plans.isEmpty { print("Nothing is older than \(configuration.audit.retentionDays) days.") }
            for plan in plans {
                print("chain \(plan.chain): \(dryRun ? "would prune" : "pruned") \(plan.span) (\(plan.records))")
            }
        }
    }
}

// MARK: - Helpers

/// Reads `--since`/`--until`.
func parseTime(_ text: String, option: String) throws -> Date {
    guard let date = AuditTimeArgument.parse(text) else {
        throw ValidationError("\(option) must be \(AuditTimeArgument.expected), not '\(text)'")
    }
    return date
}

/// A public key given as base64, or as the path of a file holding it.
func readPublicKey(_ argument: String) throws -> AuditPublicKey {
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory), !isDirectory.boolValue {
        guard let data = FileManager.default.contents(atPath: argument) else {
            throw CLIError("--public-key: cannot read \(argument)")
        }
        do {
            return try AuditPublicKey(base64: String(decoding: data, as: UTF8.self))
        } catch {
            throw CLIError("--public-key: file \(argument): \(error)")
        }
    }
    do {
        return try AuditPublicKey(base64: argument)
    } catch {
        throw CLIError("--public-key: no file '\(argument)', and not a key either: \(error)")
    }
}

/// Creates `path` with `contents`, readable and writable by its owner only; never replaces an existing file.
func writeSecretFile(_ path: String, contents: String) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    guard descriptor >= 0 else {
        let reason =
            errno == EEXIST
            ? "it already exists (a signing key is never overwritten)" : String(cString: strerror(errno))
        throw CLIError("cannot create \(path): \(reason)")
    }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    do {
        try handle.write(contentsOf: Data(contents.utf8))
        try handle.close()
    } catch {
        throw CLIError("cannot write \(path): \(error)")
    }
}

func printError(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// A progress line on standard error, redrawn in place, only when standard error is a terminal.
final class TerminalProgress {
    private let enabled = isatty(STDERR_FILENO) == 1
    private var shown = false
    private var lastDrawn = ContinuousClock.now

    func show(_ line: String) {
        guard enabled else { return }
        // At most ten redraws a second.
        guard !shown || ContinuousClock.now - lastDrawn >= .milliseconds(100) else { return }
        lastDrawn = .now
        shown = true
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    }

    func clear() {
        guard enabled, shown else { return }
        shown = false
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}

extension AuditVerification {
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "chain": .string(chain), "intact": .bool(isIntact), "records": .int(Int64(recordsVerified)),
            "lastSeq": .int(lastSeq), "checkpointsVerified": .int(Int64(checkpointsVerified)),
            "exportCheckpointsVerified": .int(Int64(exportCheckpointsVerified)),
            "unsignedRecords": .int(Int64(unsignedRecords)),
            "lastSignedSeq": lastSignedSeq.map(JSONValue.int) ?? .null,
        ]
        if let firstSeq { fields["firstSeq"] = .int(firstSeq) }
        if let problem {
            fields["problem"] = .object([
                "kind": .string(problem.kind.rawValue), "seq": .int(problem.seq), "message": .string(problem.message),
            ])
        }
        return .object(fields)
    }
}

extension AuditExport.Section {
    var json: JSONValue {
        .object([
            "chain": .string(chain), "anchorSeq": .int(anchor.seq), "records": .int(Int64(records)),
            "firstSeq": .int(firstSeq), "lastSeq": .int(lastSeq), "checkpoints": .int(Int64(checkpoints)),
            "signedEnd": .bool(signedEnd), "signedAtExport": .bool(signedAtExport),
        ])
    }
}

extension AuditRetention.Plan {
    var json: JSONValue {
        .object([
            "chain": .string(chain), "firstSeq": .int(firstSeq), "lastSeq": .int(anchor.seq),
            "records": .int(Int64(records)), "olderThan": .string(AuditTime.iso8601(millis: cutoffMillis)),
        ])
    }
}
