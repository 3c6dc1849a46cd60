package import RelayCore

extension PushStore {
    /// `chains` when given, else every chain in the store.
    package func auditChains(among chains: [String]?) async throws -> [String] {
        if let chains { return chains }
        return try await auditChains()
    }

    /// Walks the stored records of `chain` from its anchor in writing order, page by page, with each checkpoint fed
    /// right after the record it signs; memory stays bounded whatever the chain's length.
    ///
    /// - Parameters:
    ///   - publicKey: The key checkpoints must be signed with; `nil` compares their links only.
    ///   - requireSignedEnd: Whether the last record must be covered by a valid checkpoint.
    ///   - pageSize: Records read per query.
    ///   - progress: Called with the number of records verified so far, after each page.
    package func verifyAuditChain(
        _ chain: String,
        publicKey: AuditPublicKey? = nil,
        requireSignedEnd: Bool = false,
        pageSize: Int = 5_000,
        progress: (Int) -> Void = { _ in }
    ) async throws -> AuditVerification {
        let anchor = try await auditAnchor(chain: chain) ?? .genesis(chain: chain)
        var verifier = AuditVerifier(anchor: anchor, publicKey: publicKey)
        var checkpoints = try await auditCheckpoints(chain: chain)[...]
        // Checkpoints at or before the anchor sign records that were pruned; the one at the anchor still fits.
        while let first = checkpoints.first, first.seq <= anchor.seq {
            if first.seq == anchor.seq, verifier.feed(first) != nil { return verifier.finish(requireSignedEnd: false) }
            checkpoints.removeFirst()
        }
        var position: Int64 = 0
        var verified = 0
        while true {
            let page = try await auditRecords(chain: chain, after: position, limit: pageSize)
            for stored in page {
                if verifier.feed(stored.record) != nil { return verifier.finish(requireSignedEnd: requireSignedEnd) }
                while let next = checkpoints.first, next.seq <= stored.record.seq {
                    checkpoints.removeFirst()
                    if next.seq == stored.record.seq, verifier.feed(next) != nil {
                        return verifier.finish(requireSignedEnd: requireSignedEnd)
                    }
                }
            }
            verified += page.count
            progress(verified)
            guard let last = page.last, page.count == pageSize else { break }
            position = last.position
        }
        // Checkpoints past the last record sign records that are gone.
        for checkpoint in checkpoints where verifier.feed(checkpoint) != nil { break }
        return verifier.finish(requireSignedEnd: requireSignedEnd)
    }
}
