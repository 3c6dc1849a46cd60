import ArgumentParser
import Foundation
import RelayApplication
import RelayCore
import RelayServer
import RelayStore

extension AuditCommand {
    /// `audit archive`: moves closed ranges of the audit log to a signed file (``AuditArchive``).
    struct Archive: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move the audit records older than a date to a new signed archive file, and out of the store.",
            discussion: """
                From every chain, the records older than --before (its oldest run of them, as audit prune takes) are \
                written to FILE in the export format, each chain's part ending on a checkpoint signed at its last \
                record, which stays in the store as the chain's anchor. FILE is flushed to disk and verified by \
                reading it back before anything is removed from the store. Needs [audit] signing_key_file: an \
                unsigned archive could be altered unnoticed once its records have left the store. FILE is never \
                overwritten. The archiving is recorded (event retention, outcome audit.archive, with the file's \
                SHA-256) in this instance's command-line chain. Verify the archives and the store together with: \
                pushrelay audit verify --archive FILE [--archive FILE2 …] --config relay.conf
                """
        )
        @Option(
            help: ArgumentHelp("Archive the records older than this: \(AuditTimeArgument.expected).", valueName: "time")
        )
        var before: String
        @Option(help: ArgumentHelp("The archive file to create; it must not exist.", valueName: "file")) var out: String
        @Flag(name: .customLong("dry-run"), help: "Only say what would be archived.") var dryRun = false
        @OptionGroup var options: StoreOptions

        func validate() throws {
            if try parseTime(before, option: "--before") > Date() {
                throw ValidationError("--before must not be in the future: only closed ranges of the log are archived")
            }
        }

        func run() async throws {
            let (configuration, store, audit) = try await openAdminStore(options)
            let cutoff = try parseTime(before, option: "--before")
            let exists = FileManager.default.fileExists(atPath: out)
            if dryRun {
                let cuts = try await AuditCut.plans(store: store, chains: nil, before: cutoff)
                var refusals: [String] = []
                if configuration.audit.auditSigningKey == nil {
                    refusals.append("there is no [audit] signing_key_file")
                }
                if exists { refusals.append("\(out) already exists") }
                report(cuts, cutoff: cutoff, sha256: nil)
                if !options.json, !refusals.isEmpty {
                    printError("note: a real run would refuse: " + refusals.joined(separator: ", and "))
                }
                return
            }
            guard let signingKey = configuration.audit.auditSigningKey else {
                throw CLIError(
                    "audit archive needs [audit] signing_key_file: an archive is verified with the key's public half "
                        + "alone, and an unsigned one could be altered unnoticed once its records have left the store "
                        + "(audit export writes an unsigned copy without removing anything)")
            }
            if exists { throw CLIError("\(out) already exists (an archive is never overwritten)") }

            let archive = AuditArchive(store: store, signingKey: signingKey)
            let progress = TerminalProgress()
            let outcome: AuditArchive.Outcome
            do {
                outcome = try await archive.run(before: cutoff, to: out) { step in
                    progress.show(ProgressBar.line(label: "chain \(step.chain)", done: step.walked, total: step.total))
                }
                progress.clear()
            } catch AuditArchive.Failure.prune(let path, let chain, let done, let error) {
                progress.clear()
                // What was removed before the failure is recorded all the same.
                try await record(done, audit: audit)
                throw CLIError("\(AuditArchive.Failure.prune(path: path, chain: chain, done: done, error: error))")
            } catch {
                progress.clear()
                throw CLIError("\(error)")
            }
            try await record(outcome, audit: audit)
            report(outcome.cuts, cutoff: cutoff, sha256: outcome.sha256)
        }

        /// Appends an `audit.archive` record per chain archived and removed to the command line's chain.
        private func record(_ outcome: AuditArchive.Outcome, audit: CLIAudit) async throws {
            guard let sha256 = outcome.sha256, !outcome.cuts.isEmpty else { return }
            let now = Date()
            let entries = outcome.cuts.map {
                AuditArchive.entry(for: $0, file: out, sha256: sha256, actor: audit.writer.actor, time: now)
            }
            do {
                try await audit.writer.append(entries)
            } catch {
                throw CLIError(
                    "the records were archived to \(out) and removed from the store, but the archive's audit records "
                        + "could not be written: \(error)")
            }
        }

        /// Prints what was (or, in a dry run, would be) archived.
        private func report(_ cuts: [AuditCut], cutoff: Date, sha256: String?) {
            let before = AuditTime.iso8601(millis: AuditTime.millis(cutoff))
            if options.json {
                printJSON(
                    .object([
                        "dryRun": .bool(dryRun), "file": cuts.isEmpty || dryRun ? .null : .string(out),
                        "sha256": sha256.map(JSONValue.string) ?? .null, "before": .string(before),
                        "chains": .array(cuts.map(\.json)),
                        "records": .int(Int64(cuts.reduce(0) { $0 + $1.records })),
                    ]))
                return
            }
            guard !cuts.isEmpty else {
                print(
                    dryRun
                        ? "No audit records older than \(before); nothing would be archived."
                        : "No audit records older than \(before); nothing archived, \(out) not written.")
                return
            }
            for cut in cuts {
                print(
                    "chain \(cut.chain): \(dryRun ? "would archive" : "archived") \(cut.span) (\(cut.records)); "
                        + "the chain \(dryRun ? "would start" : "now starts") after seq \(cut.anchor.seq)")
            }
            let records = cuts.reduce(0) { $0 + $1.records }
            let chains = "\(cuts.count) chain\(cuts.count == 1 ? "" : "s")"
            guard let sha256 else {
                print("Dry run: \(records) records of \(chains) older than \(before) would go to \(out).")
                return
            }
            print("Wrote \(out) (sha256 \(sha256)) and removed its \(records) records of \(chains) from the store.")
            let config = options.config.map { " --config \($0)" } ?? ""
            print("Verify it with the live log: pushrelay audit verify --archive \(out)\(config)")
        }
    }
}

extension AuditArchiveFile {
    var json: JSONValue {
        var fields: [String: JSONValue] = [
            "file": .string(path), "sha256": .string(sha256), "intact": .bool(result.isIntact),
            "sections": .array(result.sections.map(\.json)),
        ]
        if let unreadable = result.unreadable {
            fields["unreadable"] = .object([
                "line": .int(Int64(unreadable.line)), "message": .string(unreadable.description),
            ])
        }
        return .object(fields)
    }
}

extension AuditArchiveCheck.Join {
    var json: JSONValue {
        .object([
            "chain": .string(chain), "joined": .bool(isJoined), "problem": problem.map(JSONValue.string) ?? .null,
            "notes": .array(notes.map(JSONValue.string)), "files": .array(parts.map { .string($0.file) }),
            "archivedFromSeq": .int((parts.first?.anchor.seq ?? 0) + 1),
            "archivedToSeq": .int(parts.last?.verification.lastSeq ?? 0),
            "storeStartsAfterSeq": storeAnchor.map { .int($0.seq) } ?? .null,
        ])
    }
}
