import Foundation
import RelayCore
import RelayStore
import Testing

/// The rules of ``PushStore``, as ``MemoryStore`` defines them, checked against every store.
@Suite(.timeLimit(.minutes(1)))
struct PushStoreConformanceTests {
    // MARK: - Schema

    @Test(arguments: StoreKind.all)
    func migratingAgainIsHarmless(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.migrate()
            try await store.ping()
            try await store.createTenant(Fixture.tenant("a"))
            try await store.migrate()
            #expect(try await store.tenant(named: "a") == Fixture.tenant("a"))
        }
    }

    // MARK: - Tenants

    @Test(arguments: StoreKind.all)
    func tenantIsFoundByIDAndByName(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let tenant = Tenant(
                id: "tenant-1",
                name: "acme",
                limits: RateLimits(ratePerSecond: 2.5, burst: 7, dailyQuota: 1_234, perDevicePerMinute: 3),
                allowCriticalAlerts: true,
                disabled: true,
                createdAt: Fixture.t0
            )
            try await store.createTenant(tenant)
            try await store.createTenant(Fixture.tenant("other"))

            #expect(try await store.tenant(id: "tenant-1") == tenant)
            #expect(try await store.tenant(named: "acme") == tenant)
            #expect(try await store.tenant(id: "missing") == nil)
            #expect(try await store.tenant(named: "missing") == nil)
            #expect(try await store.tenant(named: "ACME") == nil, "names are case-sensitive")
        }
    }

    @Test(arguments: StoreKind.all)
    func tenantIsUpdatedByID(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTenant(Fixture.tenant("a"))
            try await store.createTenant(Fixture.tenant("b"))
            var changed = try #require(try await store.tenant(named: "a"))
            changed.name = "a2"
            changed.limits = RateLimits(ratePerSecond: 9, burst: 90, dailyQuota: 900, perDevicePerMinute: 9)
            changed.allowCriticalAlerts.toggle()
            changed.disabled = true
            try await store.updateTenant(changed)
            #expect(try await store.tenant(id: changed.id) == changed)
            #expect(try await store.tenant(named: "a") == nil)

            var clash = changed
            clash.name = "b"
            await #expect(throws: StoreError.duplicate("tenant b")) { try await store.updateTenant(clash) }
            var missing = changed
            missing.id = "no-such-tenant"
            missing.name = "zz"
            await #expect(throws: StoreError.self) { try await store.updateTenant(missing) }
        }
    }

    @Test(arguments: StoreKind.all)
    func keyRevocationAndExpiryAreUpdated(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let tenant = Fixture.tenant("a")
            try await store.createTenant(tenant)
            let key = TenantKeyRecord(id: "k1", tenantID: tenant.id, secretHash: [1, 2, 3], createdAt: Fixture.t0)
            try await store.createKey(key)
            var revoked = key
            revoked.revokedAt = Fixture.date(50)
            revoked.expiresAt = Fixture.date(60)
            try await store.updateKey(revoked)
            let stored = try #require(try await store.key(id: "k1"))
            #expect(stored.revokedAt == Fixture.date(50))
            #expect(stored.expiresAt == Fixture.date(60))
            #expect(stored.secretHash == [1, 2, 3])
            #expect(!stored.isActive(at: Fixture.date(55)))
            var unknown = key
            unknown.id = "nope"
            await #expect(throws: StoreError.self) { try await store.updateKey(unknown) }
        }
    }

    @Test(arguments: StoreKind.all)
    func tenantsAreListedOldestFirst(kind: StoreKind) async throws {
        try await kind.withStore { store in
            #expect(try await store.tenants().isEmpty)
            try await store.createTenant(Fixture.tenant("b", createdAt: Fixture.date(20)))
            try await store.createTenant(Fixture.tenant("c", createdAt: Fixture.date(10)))
            try await store.createTenant(Fixture.tenant("a", createdAt: Fixture.date(30)))
            try await store.createTenant(Fixture.tenant("d", createdAt: Fixture.date(10)))

            let tenants = try await store.tenants()
            #expect(tenants.map(\.name) == ["c", "d", "b", "a"], "by creation, then by name")
            #expect(tenants.first == Fixture.tenant("c", createdAt: Fixture.date(10)))
        }
    }

    @Test(arguments: StoreKind.all)
    func takenTenantNameIsADuplicate(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let first = Fixture.tenant("acme", id: "tenant-1")
            try await store.createTenant(first)

            let error = await #expect(throws: StoreError.self) {
                try await store.createTenant(Tenant(id: "tenant-2", name: "acme", allowCriticalAlerts: true))
            }
            #expect(error?.kind == .duplicate)
            #expect(try await store.tenants() == [first])
            #expect(try await store.tenant(id: "tenant-2") == nil)
        }
    }

    // MARK: - Keys

    @Test(arguments: StoreKind.all)
    func keysAreFoundByIDAndListedPerTenant(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTenant(Fixture.tenant("a"))
            try await store.createTenant(Fixture.tenant("b"))
            let full = TenantKeyRecord(
                id: "key-full",
                tenantID: "tenant-a",
                secretHash: (0..<32).map { UInt8($0 * 7 % 256) },
                createdAt: Fixture.date(5),
                lastUsedAt: Fixture.date(6),
                expiresAt: Fixture.date(1_000),
                revokedAt: Fixture.date(7)
            )
            let older = Fixture.key("key-older", tenantID: "tenant-a", createdAt: Fixture.date(1))
            let others = Fixture.key("key-b", tenantID: "tenant-b")
            for key in [full, older, others] { try await store.createKey(key) }

            #expect(try await store.key(id: "key-full") == full)
            #expect(try await store.key(id: "key-older") == older)
            #expect(try await store.key(id: "missing") == nil)
            #expect(try await store.keys(tenantID: "tenant-a") == [older, full], "oldest first, own keys only")
            #expect(try await store.keys(tenantID: "tenant-b") == [others])
            #expect(try await store.keys(tenantID: "missing").isEmpty)
        }
    }

    @Test(arguments: StoreKind.all)
    func keyForAnUnknownTenantIsNotFound(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let error = await #expect(throws: StoreError.self) {
                try await store.createKey(Fixture.key("key-1", tenantID: "tenant-missing"))
            }
            #expect(error?.kind == .notFound)
            let key = try await store.key(id: "key-1")
            #expect(key == nil)
        }
    }

    @Test(arguments: StoreKind.all)
    func takenKeyIDIsADuplicate(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTenant(Fixture.tenant("a"))
            try await store.createTenant(Fixture.tenant("b"))
            let first = Fixture.key("key-1", tenantID: "tenant-a")
            try await store.createKey(first)

            for tenantID in ["tenant-a", "tenant-b"] {
                let error = await #expect(throws: StoreError.self) {
                    try await store.createKey(Fixture.key("key-1", tenantID: tenantID, createdAt: Fixture.date(9)))
                }
                #expect(error?.kind == .duplicate)
            }
            #expect(try await store.key(id: "key-1") == first)
            #expect(try await store.keys(tenantID: "tenant-b").isEmpty)
        }
    }

    @Test(arguments: StoreKind.all)
    func markingKeysUsedOnlyMovesForward(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTenant(Fixture.tenant("a"))
            try await store.createKey(Fixture.key("key-1", tenantID: "tenant-a"))
            try await store.createKey(Fixture.key("key-2", tenantID: "tenant-a"))

            try await store.markKeysUsed([], at: Fixture.date(1))
            try await store.markKeysUsed(["key-1", "key-missing"], at: Fixture.date(10))
            #expect(try await store.key(id: "key-1")?.lastUsedAt == Fixture.date(10))
            #expect(try await store.key(id: "key-2")?.lastUsedAt == nil)
            #expect(try await store.key(id: "key-missing") == nil, "marking does not create keys")

            try await store.markKeysUsed(["key-1", "key-2"], at: Fixture.date(5))
            #expect(try await store.key(id: "key-1")?.lastUsedAt == Fixture.date(10), "an older batch is ignored")
            #expect(try await store.key(id: "key-2")?.lastUsedAt == Fixture.date(5))

            try await store.markKeysUsed(["key-1"], at: Fixture.date(20))
            #expect(try await store.key(id: "key-1")?.lastUsedAt == Fixture.date(20))
        }
    }

    // MARK: - Receipts

    @Test(arguments: StoreKind.all)
    func receiptsAreFoundOnlyByTheirTenant(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let plain = Fixture.receipt("r1")
            var full = Fixture.receipt("r2", provider: .expo, status: .error, expoTicketID: "ticket-2")
            full.isCritical = true
            full.errorCode = "DeviceNotRegistered"
            full.message = "The device token is no longer registered."
            full.removeToken = true
            full.providerMessageID = "msg-2"
            full.updatedAt = Fixture.date(3)
            let others = Fixture.receipt("r3", tenantID: "tenant-b", provider: .fcm, status: .ok)
            try await store.commit(StoreBatch(receipts: [plain, full, others]))
            try await store.commit(StoreBatch(receipts: []))

            #expect(
                try await store.receipts(ids: ["r1", "r2", "r3", "missing"], tenantID: "tenant-a") == [plain, full])
            #expect(
                try await store.receipts(ids: ["r2", "r1"], tenantID: "tenant-a") == [full, plain], "in asked order")
            #expect(try await store.receipts(ids: ["r3"], tenantID: "tenant-a").isEmpty, "another tenant's")
            #expect(try await store.receipts(ids: ["r3"], tenantID: "tenant-b") == [others])
            #expect(try await store.receipts(ids: ["r1"], tenantID: "tenant-missing").isEmpty)
            #expect(try await store.receipts(ids: [], tenantID: "tenant-a").isEmpty)
        }
    }

    @Test(arguments: StoreKind.all)
    func committingATakenReceiptIDReplacesIt(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.commit(StoreBatch(receipts: [Fixture.receipt("r1")]))
            let replacement = Fixture.receipt("r1", provider: .fcm, status: .ok, createdAt: Fixture.date(1))
            try await store.commit(StoreBatch(receipts: [replacement]))
            #expect(try await store.receipts(ids: ["r1"], tenantID: "tenant-a") == [replacement])
        }
    }

    @Test(arguments: StoreKind.all)
    func provisionalReceiptsNeverOverwriteAnOutcome(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let delivered = Fixture.receipt("r1", status: .ok)
            let pendingFirst = Fixture.receipt("r2")
            var failedLater = Fixture.receipt("r2", status: .error)
            failedLater.errorCode = "DeviceNotRegistered"
            // The outcome was committed first: the provisional "pending" of the same receipt is ignored.
            try await store.commit(StoreBatch(receipts: [delivered]))
            try await store.commit(StoreBatch(provisionalReceipts: [Fixture.receipt("r1"), pendingFirst]))
            #expect(try await store.receipts(ids: ["r1", "r2"], tenantID: "tenant-a") == [delivered, pendingFirst])
            // The outcome comes after the provisional receipt: it replaces it.
            try await store.commit(StoreBatch(receipts: [failedLater]))
            #expect(try await store.receipts(ids: ["r2"], tenantID: "tenant-a") == [failedLater])
            // Both in one batch: the outcome wins.
            let fresh = Fixture.receipt("r3", status: .ok)
            try await store.commit(StoreBatch(receipts: [fresh], provisionalReceipts: [Fixture.receipt("r3")]))
            #expect(try await store.receipts(ids: ["r3"], tenantID: "tenant-a") == [fresh])
        }
    }

    @Test(arguments: StoreKind.all)
    func updatesRecordOutcomes(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var apns = Fixture.receipt("r1")
            apns.providerMessageID = "apns-id-1"
            let expo = Fixture.receipt("r2", provider: .expo)
            let untouched = Fixture.receipt("r3")
            try await store.commit(StoreBatch(receipts: [apns, expo, untouched]))

            try await store.commit(
                StoreBatch(receiptUpdates: [
                    // No message id in the update: the known one stays.
                    ReceiptUpdate(id: "r1", status: .ok, updatedAt: Fixture.date(1)),
                    // Expo accepted the push: a ticket to poll for.
                    ReceiptUpdate(
                        id: "r2", status: .pending, providerMessageID: "t-2", expoTicketID: "t-2",
                        updatedAt: Fixture.date(2)),
                    ReceiptUpdate(id: "missing", status: .ok, updatedAt: Fixture.date(1)),
                ]))
            try await store.commit(StoreBatch(receiptUpdates: []))
            var expected = [apns, expo]
            expected[0].status = .ok
            expected[0].updatedAt = Fixture.date(1)
            expected[1].providerMessageID = "t-2"
            expected[1].expoTicketID = "t-2"
            expected[1].updatedAt = Fixture.date(2)
            #expect(try await store.receipts(ids: ["r1", "r2", "missing"], tenantID: "tenant-a") == expected)

            try await store.commit(
                StoreBatch(receiptUpdates: [
                    ReceiptUpdate(
                        id: "r2",
                        status: .error,
                        errorCode: "DeviceNotRegistered",
                        message: "gone",
                        removeToken: true,
                        updatedAt: Fixture.date(3)
                    )
                ]))
            let failed = try #require(try await store.receipts(ids: ["r2"], tenantID: "tenant-a").first)
            #expect(failed.status == .error)
            #expect(failed.errorCode == "DeviceNotRegistered")
            #expect(failed.message == "gone")
            #expect(failed.removeToken)
            #expect(failed.providerMessageID == "t-2", "kept")
            #expect(failed.expoTicketID == nil, "the receipt is no longer awaited")
            #expect(failed.updatedAt == Fixture.date(3))
            #expect(try await store.receipts(ids: ["r3"], tenantID: "tenant-a") == [untouched])
        }
    }

    /// A Live Activity push's receipt keeps its `event` from admission to its outcome, however it is written; every
    /// other receipt has none.
    @Test(arguments: StoreKind.all)
    func receiptsKeepTheirLiveActivityEvent(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let activities = LiveActivityEvent.allCases.map { event in
                var receipt = Fixture.receipt("la-\(event.rawValue)")
                receipt.liveActivityEvent = event
                return receipt
            }
            let plain = Fixture.receipt("plain")
            try await store.commit(StoreBatch(provisionalReceipts: activities + [plain]))
            let ids = activities.map(\.id) + [plain.id]
            let admitted = try await store.receipts(ids: ids, tenantID: "tenant-a")
            #expect(admitted == activities + [plain])
            #expect(admitted.map(\.liveActivityEvent) == [.start, .update, .end, nil])

            // Concluded as the relay concludes them: one by an update of its outcome, one written whole.
            let delivered = ReceiptUpdate(
                outcome: .delivered(providerMessageID: "m1"), id: "la-start", at: Fixture.date(1))
            var ended = activities[2]
            let gone = DeliveryOutcome.tokenInvalid(.deviceNotRegistered, reason: "Unregistered", since: nil)
            ended.apply(ReceiptUpdate(outcome: gone, id: ended.id, at: Fixture.date(2)))
            try await store.commit(StoreBatch(receipts: [ended], receiptUpdates: [delivered]))
            let concluded = try await store.receipts(ids: ids, tenantID: "tenant-a")
            #expect(concluded.map(\.liveActivityEvent) == [.start, .update, .end, nil])
            #expect(concluded.map(\.status) == [.ok, .pending, .error, .pending])
            #expect(concluded[2] == ended)

            // The Expo poller's lookup reads it too (the store does not judge which provider takes one).
            var awaited = Fixture.receipt("la-awaited", provider: .expo, expoTicketID: "T")
            awaited.liveActivityEvent = .update
            try await store.commit(StoreBatch(receipts: [awaited, Fixture.receipt("awaited", expoTicketID: "U")]))
            #expect(try await store.pendingReceipt(expoTicketID: "T")?.liveActivityEvent == .update)
            #expect(try await store.pendingReceipt(expoTicketID: "U") != nil)
            #expect(try await store.pendingReceipt(expoTicketID: "U")?.liveActivityEvent == nil)
        }
    }

    @Test(arguments: StoreKind.all)
    func lookupOfManyIDsFindsThemAll(kind: StoreKind) async throws {
        try await kind.withStore { store in
            // More than one chunk of an `IN` list, with another tenant's receipts mixed in.
            let receipts = (0..<1_300).map { index in
                Fixture.receipt("r\(index)", tenantID: index.isMultiple(of: 13) ? "tenant-b" : "tenant-a")
            }
            for batch in stride(from: 0, to: receipts.count, by: 100) {
                try await store.commit(StoreBatch(receipts: Array(receipts[batch..<batch + 100])))
            }
            let ids = receipts.map(\.id).reversed() + (0..<50).map { "missing-\($0)" }
            let found = try await store.receipts(ids: ids, tenantID: "tenant-a")
            #expect(found == Array(receipts.filter { $0.tenantID == "tenant-a" }.reversed()))
        }
    }

    @Test(arguments: StoreKind.all)
    func pruningDeletesOnlyExpiredReceipts(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let now = Fixture.date(100)
            try await store.commit(
                StoreBatch(receipts: [
                    Fixture.receipt("expired-1", expiresAt: Fixture.date(10)),
                    Fixture.receipt("expired-2", tenantID: "tenant-b", expiresAt: Fixture.date(99)),
                    Fixture.receipt("expires-now", expiresAt: now),
                    Fixture.receipt("later", expiresAt: Fixture.date(101)),
                ]))

            #expect(try await store.pruneReceipts(now: now) == 2)
            #expect(try await store.pruneReceipts(now: now) == 0)
            let left = try await store.receipts(ids: ["expired-1", "expires-now", "later"], tenantID: "tenant-a")
            #expect(left.map(\.id) == ["expires-now", "later"])
            #expect(try await store.receipts(ids: ["expired-2"], tenantID: "tenant-b").isEmpty)
        }
    }

    @Test(arguments: StoreKind.all)
    func pruningManyReceiptsCountsThemAll(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let count = 12_345
            let receipts = (0..<count).map { Fixture.receipt("r\($0)", expiresAt: Fixture.date($0 % 50)) }
            for batch in stride(from: 0, to: count, by: 1_000) {
                try await store.commit(StoreBatch(receipts: Array(receipts[batch..<min(batch + 1_000, count)])))
            }
            try await store.commit(StoreBatch(receipts: [Fixture.receipt("kept", expiresAt: Fixture.date(60))]))

            #expect(try await store.pruneReceipts(now: Fixture.date(50)) == count)
            #expect(try await store.receipts(ids: ["r0", "r49", "kept"], tenantID: "tenant-a").map(\.id) == ["kept"])
        }
    }

    // MARK: - Expo receipts

    @Test(arguments: StoreKind.all)
    func pendingExpoTicketsAreTheAwaitedOnesOldestFirst(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.commit(
                StoreBatch(receipts: [
                    Fixture.receipt("a", provider: .expo, expoTicketID: "A", createdAt: Fixture.date(3)),
                    Fixture.receipt("b", provider: .expo, expoTicketID: "B", createdAt: Fixture.date(1)),
                    Fixture.receipt(
                        "h", tenantID: "tenant-b", provider: .expo, expoTicketID: "H",
                        createdAt: Fixture.date(2)),
                    // Not awaited: no ticket, or an outcome already known.
                    Fixture.receipt("c", provider: .expo, createdAt: Fixture.date(0)),
                    Fixture.receipt("d", provider: .expo, status: .ok, expoTicketID: "D", createdAt: Fixture.date(0)),
                    Fixture.receipt(
                        "g", provider: .expo, status: .error, expoTicketID: "G", createdAt: Fixture.date(0)),
                    // Too recent: at the cutoff, and after it.
                    Fixture.receipt("e", provider: .expo, expoTicketID: "E", createdAt: Fixture.date(10)),
                    Fixture.receipt("f", provider: .expo, expoTicketID: "F", createdAt: Fixture.date(20)),
                ]))

            let cutoff = Fixture.date(10)
            #expect(try await store.pendingExpoTickets(sentBefore: cutoff, limit: 100) == ["B", "H", "A"])
            #expect(try await store.pendingExpoTickets(sentBefore: cutoff, limit: 2) == ["B", "H"])
            #expect(try await store.pendingExpoTickets(sentBefore: cutoff, limit: 0).isEmpty)
            #expect(try await store.pendingExpoTickets(sentBefore: Fixture.date(0), limit: 100).isEmpty)
            #expect(try await store.pendingExpoTickets(sentBefore: Fixture.date(21), limit: 100).count == 5)
        }
    }

    /// Each app's receipt poller asks for its own app's tickets (with its own access token); the receipt keeps its
    /// app when stored and read back.
    @Test(arguments: StoreKind.all)
    func pendingExpoTicketsOfOneApp(kind: StoreKind) async throws {
        try await kind.withStore { store in
            var beta = Fixture.receipt("b", provider: .expo, expoTicketID: "B", createdAt: Fixture.date(1))
            beta.app = "beta"
            try await store.commit(
                StoreBatch(receipts: [
                    Fixture.receipt("a", provider: .expo, expoTicketID: "A", createdAt: Fixture.date(2)), beta,
                ]))
            let cutoff = Fixture.date(10)
            #expect(try await store.pendingExpoTickets(sentBefore: cutoff, limit: 100, app: "beta") == ["B"])
            #expect(try await store.pendingExpoTickets(sentBefore: cutoff, limit: 100, app: "default") == ["A"])
            #expect(try await store.pendingExpoTickets(sentBefore: cutoff, limit: 100, app: nil) == ["B", "A"])
            #expect(try await store.pendingReceipt(expoTicketID: "B")?.app == "beta")
        }
    }

    /// A receipt close that finds its receipt final fails the whole commit: another writer recorded that outcome,
    /// so neither the close nor anything else of the batch (usage, other receipts) may be written.
    @Test(arguments: StoreKind.all)
    func aCloseOfAFinalReceiptWritesNothingOfItsBatch(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let final = Fixture.receipt("final", provider: .expo, status: .ok)
            try await store.commit(
                StoreBatch(receipts: [final, Fixture.receipt("open", provider: .expo, expoTicketID: "O")]))
            let close = { (id: String) in
                ReceiptUpdate(id: id, status: .error, errorCode: "DeviceNotRegistered", updatedAt: Fixture.date(5))
            }
            var batch = StoreBatch(
                receipts: [Fixture.receipt("bystander")],
                receiptCloses: [close("open"), close("final"), close("unknown")]
            )
            batch.count(
                UsageCounts(tokenInvalid: 1), for: UsageKey(tenantID: "tenant-a", date: Fixture.t0, provider: .expo))
            do {
                try await store.commit(batch)
                Issue.record("the commit should have failed")
            } catch let error as StoreError {
                #expect(error == .receiptsAlreadyFinal(["final", "unknown"]))
            }
            let found = try await store.receipts(ids: ["final", "open", "bystander"], tenantID: "tenant-a")
            #expect(found.map(\.id) == ["final", "open"])
            #expect(found.map(\.status) == [.ok, .pending])
            #expect(try await store.usage(tenantID: "tenant-a", fromDay: "1970-01-01").isEmpty)

            // Alone, the close of the pending receipt goes through.
            try await store.commit(StoreBatch(receiptCloses: [close("open")]))
            #expect(
                try await store.receipts(ids: ["open"], tenantID: "tenant-a").map(\.errorCode) == [
                    "DeviceNotRegistered"
                ])
        }
    }

    @Test(arguments: StoreKind.all)
    func expoReceiptCompletesThePendingReceipt(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let done = Fixture.receipt("done", provider: .expo, status: .ok, expoTicketID: "D")
            try await store.commit(
                StoreBatch(receipts: [
                    Fixture.receipt("ok", provider: .expo, expoTicketID: "A"),
                    Fixture.receipt("gone", provider: .expo, expoTicketID: "B"),
                    done,
                ]))
            let start = Date()

            try await store.closeExpoReceipt(ticketID: "A", outcome: .delivered(providerMessageID: "A"))
            try await store.closeExpoReceipt(
                ticketID: "B",
                outcome: .tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil)
            )
            try await store.closeExpoReceipt(ticketID: "D", outcome: .configurationError(reason: "late"))
            try await store.closeExpoReceipt(ticketID: "missing", outcome: .delivered(providerMessageID: nil))

            let found = try await store.receipts(ids: ["ok", "gone", "done"], tenantID: "tenant-a")
            try #require(found.count == 3)
            let (ok, gone) = (found[0], found[1])
            #expect(ok.status == .ok)
            #expect(ok.providerMessageID == "A")
            #expect(ok.expoTicketID == nil)
            #expect(ok.errorCode == nil && !ok.removeToken)
            #expect(ok.updatedAt.timeIntervalSince(start) > -1, "stamped when recorded")
            #expect(gone.status == .error)
            #expect(gone.errorCode == "DeviceNotRegistered")
            #expect(gone.removeToken)
            #expect(gone.message != nil)
            #expect(gone.expoTicketID == nil)
            #expect(found[2] == done, "only a pending receipt takes an outcome")
            #expect(try await store.pendingExpoTickets(sentBefore: Fixture.date(1), limit: 10).isEmpty)
        }
    }

    @Test(arguments: StoreKind.all)
    func anExpoReceiptMovesItsPushFromAcceptedToItsOutcome(kind: StoreKind) async throws {
        try await kind.withStore { store in
            // Accepted on two days: a receipt moves its push on the day it was accepted, whenever it arrives.
            let (first, second) = (Fixture.t0, Fixture.date(86_400))
            let (firstDay, secondDay) = (UsageKey.day(of: first), UsageKey.day(of: second))
            var ticketTime = StoreBatch(receipts: [
                Fixture.receipt("gone", provider: .expo, expoTicketID: "G", createdAt: first),
                Fixture.receipt("ok", provider: .expo, expoTicketID: "O", createdAt: first),
                Fixture.receipt("lost", provider: .expo, expoTicketID: "L", createdAt: second),
            ])
            ticketTime.count(
                UsageCounts(accepted: 2), for: UsageKey(tenantID: "tenant-a", date: first, provider: .expo))
            ticketTime.count(
                UsageCounts(accepted: 1), for: UsageKey(tenantID: "tenant-a", date: second, provider: .expo))
            try await store.commit(ticketTime)
            func usage() async throws -> [String: UsageCounts] {
                var byDay: [String: UsageCounts] = [:]
                for row in try await store.usage(tenantID: "tenant-a", fromDay: firstDay) {
                    #expect(row.provider == .expo)
                    byDay[row.day] = row.counts
                }
                return byDay
            }
            #expect(try await usage() == [firstDay: UsageCounts(accepted: 2), secondDay: UsageCounts(accepted: 1)])

            let dead = DeliveryOutcome.tokenInvalid(.deviceNotRegistered, reason: "DeviceNotRegistered", since: nil)
            #expect(try await store.closeExpoReceipt(ticketID: "G", outcome: dead))
            #expect(
                try await usage() == [
                    firstDay: UsageCounts(tokenInvalid: 1, accepted: 1), secondDay: UsageCounts(accepted: 1),
                ]
            )
            #expect(try await store.closeExpoReceipt(ticketID: "O", outcome: .delivered(providerMessageID: "O")))
            #expect(
                try await usage() == [
                    firstDay: UsageCounts(delivered: 1, tokenInvalid: 1), secondDay: UsageCounts(accepted: 1),
                ]
            )

            // A receipt already recorded, or an unknown ticket, moves nothing.
            #expect(try await !store.closeExpoReceipt(ticketID: "G", outcome: .delivered(providerMessageID: "G")))
            #expect(try await !store.closeExpoReceipt(ticketID: "missing", outcome: dead))
            // A receipt Expo no longer keeps is closed as unavailable (what the poller records): failed.
            let expired = DeliveryOutcome.unavailable(reason: "Expo's receipt expired", retryAfter: nil)
            #expect(try await store.closeExpoReceipt(ticketID: "L", outcome: expired))
            #expect(
                try await usage() == [
                    firstDay: UsageCounts(delivered: 1, tokenInvalid: 1), secondDay: UsageCounts(failed: 1),
                ]
            )
        }
    }

    /// Usage is kept by app as well as by tenant, day and provider; the daily quota counts every app.
    @Test(arguments: StoreKind.all)
    func usageIsKeptByApp(kind: StoreKind) async throws {
        try await kind.withStore { store in
            let day = UsageKey.day(of: Fixture.t0)
            var batch = StoreBatch()
            batch.count(UsageCounts(delivered: 2), for: UsageKey(tenantID: "tenant-a", day: day, provider: .apns))
            batch.count(
                UsageCounts(delivered: 3), for: UsageKey(tenantID: "tenant-a", day: day, provider: .apns, app: "beta"))
            batch.count(
                UsageCounts(failed: 1), for: UsageKey(tenantID: "tenant-a", day: day, provider: .apns, app: "beta"))
            try await store.commit(batch)
            var again = StoreBatch()
            again.count(
                UsageCounts(delivered: 1), for: UsageKey(tenantID: "tenant-a", day: day, provider: .apns, app: "beta"))
            try await store.commit(again)
            #expect(
                try await store.usage(tenantID: "tenant-a", fromDay: day) == [
                    UsageRow(day: day, provider: .apns, counts: UsageCounts(delivered: 2)),
                    UsageRow(day: day, provider: .apns, counts: UsageCounts(delivered: 4, failed: 1), app: "beta"),
                ])
            #expect(try await store.quotaUsed(tenantID: "tenant-a", on: Fixture.t0) == 7)
        }
    }

    // MARK: - Secrets

    @Test(arguments: StoreKind.all)
    func fingerprintKeyIsMadeOnceAndKept(kind: StoreKind) async throws {
        try await kind.withStore { store in
            async let first = store.fingerprintKey()
            async let second = store.fingerprintKey()
            let (a, b) = try await (first, second)
            #expect(a.count == 32)
            #expect(a == b, "concurrent first calls agree")
            #expect(try await store.fingerprintKey() == a)
            #expect(Set(a).count > 1, "random, not a constant")
        }
    }

    // MARK: - Concurrency

    @Test(arguments: StoreKind.all)
    func concurrentCallersAllLand(kind: StoreKind) async throws {
        try await kind.withStore { store in
            try await store.createTenant(Fixture.tenant("a"))
            try await store.createKey(Fixture.key("key-1", tenantID: "tenant-a"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        let receipts = (0..<25).map { Fixture.receipt("w\(worker)-\($0)") }
                        try await store.commit(StoreBatch(receipts: receipts))
                        _ = try await store.key(id: "key-1")
                        try await store.markKeysUsed(["key-1"], at: Fixture.date(worker))
                        try await store.commit(
                            StoreBatch(
                                receiptUpdates: receipts.map {
                                    ReceiptUpdate(id: $0.id, status: .ok, updatedAt: Fixture.date(1))
                                }
                            )
                        )
                        let found = try await store.receipts(ids: receipts.map(\.id), tenantID: "tenant-a")
                        #expect(found.count == 25)
                    }
                }
                try await group.waitForAll()
            }
            let ids = (0..<8).flatMap { worker in (0..<25).map { "w\(worker)-\($0)" } }
            let found = try await store.receipts(ids: ids, tenantID: "tenant-a")
            #expect(found.count == 200)
            #expect(found.allSatisfy { $0.status == .ok })
            #expect(try await store.key(id: "key-1")?.lastUsedAt == Fixture.date(7))
        }
    }
}
