internal import Crypto
internal import Foundation
internal import Logging
internal import NIOSSL
internal import RelayCore

extension ConfigurationReader {
    /// Every section, in file order, so problems come out in the order of the file and the docs.
    mutating func configuration() -> RelayConfiguration {
        let server = server()
        let store = store()
        let upstream = upstream()
        let apns = apns()
        let fcm = fcm()
        let expo = expo()
        var apps: [String: RelayConfiguration.App] = [:]
        for (name, sections) in appTables.sorted(by: { $0.key < $1.key }) {
            apps[name] = RelayConfiguration.App(
                apns: self.apns(app: name),
                fcm: self.fcm(app: name),
                // An app's Expo needs no credential either, but it is the app's only when it has its own section.
                expo: sections.contains("expo")
                    ? self.expo(app: name, receiptDelaySeconds: expo.receiptDelaySeconds) : nil
            )
        }
        let android = android()
        let limits = limits()
        let criticalPerDevicePerMinute = criticalPerDevicePerMinute()
        let audit = audit(store: store)
        let receipts = receipts()
        let logging = logging()
        return RelayConfiguration(
            server: server,
            store: store,
            upstream: upstream,
            apns: apns,
            fcm: fcm,
            expo: expo,
            apps: apps,
            android: android,
            limits: limits,
            criticalPerDevicePerMinute: criticalPerDevicePerMinute,
            audit: audit,
            receipts: receipts,
            logging: logging
        )
    }

    // MARK: - [server] and [store]

    mutating func server() -> RelayConfiguration.Server {
        var server = RelayConfiguration.Server()
        if let text = string(ConfigurationKey.serverListen) {
            do throws(ConfigurationSyntaxError) {
                server.listen = try ConfigurationSyntax.listenAddress(text)
            } catch {
                report(ConfigurationKey.serverListen, error.message)
            }
        }

        let certKey = ConfigurationKey.serverTLSCertFile
        let privateKeyKey = ConfigurationKey.serverTLSKeyFile
        switch (isMentioned(certKey), isMentioned(privateKeyKey)) {
        case (true, false):
            report(privateKeyKey, "required when \(origin(certKey)) is set: set both TLS files or neither")
        case (false, true):
            report(certKey, "required when \(origin(privateKeyKey)) is set: set both TLS files or neither")
        case (true, true), (false, false):
            break
        }
        if case (let path, let contents)? = file(certKey) {
            let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(contents))
            if certificates?.isEmpty ?? true {
                report(certKey, "file \(path) holds no PEM certificate")
            } else {
                server.tlsCertFile = path
            }
        }
        if case (let path, let contents)? = file(privateKeyKey) {
            if (try? NIOSSLPrivateKey(bytes: Array(contents), format: .pem)) == nil {
                report(privateKeyKey, "file \(path) holds no unencrypted PEM private key")
            } else {
                server.tlsKeyFile = path
            }
        }

        if let proxies = strings(ConfigurationKey.serverTrustedProxies) {
            var valid = true
            for proxy in proxies {
                do throws(ConfigurationSyntaxError) {
                    try ConfigurationSyntax.checkNetwork(proxy)
                } catch {
                    valid = false
                    report(ConfigurationKey.serverTrustedProxies, error.message)
                }
            }
            if valid { server.trustedProxies = proxies }
        }
        server.drainSeconds = integer(ConfigurationKey.serverDrainSeconds, minimum: 0) ?? server.drainSeconds
        server.maxPendingNotifications =
            integer(
                ConfigurationKey.serverMaxPendingNotifications,
                minimum: RelayConfiguration.Server.minimumPendingNotifications
            ) ?? server.maxPendingNotifications
        server.headerTimeoutMs =
            integer(ConfigurationKey.serverHeaderTimeoutMs, minimum: 100) ?? server.headerTimeoutMs
        server.bodyTimeoutMs = integer(ConfigurationKey.serverBodyTimeoutMs, minimum: 100) ?? server.bodyTimeoutMs
        server.bodyMinBytesPerSecond =
            integer(ConfigurationKey.serverBodyMinBytesPerSecond, minimum: 0) ?? server.bodyMinBytesPerSecond
        server.idleTimeoutMs = integer(ConfigurationKey.serverIdleTimeoutMs, minimum: 100) ?? server.idleTimeoutMs
        server.maxConnections = integer(ConfigurationKey.serverMaxConnections, minimum: 1) ?? server.maxConnections
        server.readinessTimeoutMs =
            integer(ConfigurationKey.serverReadinessTimeoutMs, minimum: 100) ?? server.readinessTimeoutMs
        return server
    }

    mutating func store() -> RelayConfiguration.Store {
        var store = RelayConfiguration.Store(directory: directory)
        if let url = string(ConfigurationKey.storeURL) {
            do throws(ConfigurationSyntaxError) {
                _ = try RelayConfiguration.Store.Location(url: url, directory: directory)
                store.url = url
            } catch {
                report(ConfigurationKey.storeURL, error.message)
            }
        }
        let keyFile = ConfigurationKey.storeJournalKeyFile
        if case (let path, let contents)? = file(keyFile) {
            do throws(JournalKeyError) {
                _ = try JournalKey(fileContents: contents)
                store.journalKeyFile = path
                store.journalKey = RelayConfiguration.Secret(contents.base64EncodedString())
            } catch {
                // The error says what is wrong with the contents, never the bytes.
                report(keyFile, "file \(path) \(error.message)")
            }
        } else if !isMentioned(keyFile), case .postgres? = store.location {
            report(
                keyFile,
                "required with a PostgreSQL store: every instance seals and opens the delivery journal with this "
                    + "one key (32 random bytes, e.g. `openssl rand -base64 32 > journal.key`)"
            )
        }
        store.requestTimeoutMs =
            integer(ConfigurationKey.storeRequestTimeoutMs, minimum: 100) ?? store.requestTimeoutMs
        store.unsavedLimit = integer(ConfigurationKey.storeUnsavedLimit, minimum: 1) ?? store.unsavedLimit
        store.connectTimeoutSeconds =
            integer(ConfigurationKey.storeConnectTimeoutSeconds, minimum: 1, maximum: 86_400)
            ?? store.connectTimeoutSeconds
        return store
    }

    // MARK: - [upstream]

    mutating func upstream() -> RelayConfiguration.Upstream {
        typealias Upstream = RelayConfiguration.Upstream
        var upstream = Upstream()
        let transportKey = ConfigurationKey.upstreamTransport
        let proxyKey = ConfigurationKey.upstreamProxy
        let transport: Upstream.Transport? = choice(transportKey)
        if let text = string(proxyKey) {
            do throws(ConfigurationSyntaxError) {
                upstream.proxy = try ConfigurationSyntax.proxy(text)
            } catch {
                report(proxyKey, error.message)
            }
        }
        // A proxy needs the curl transport: it is chosen when no transport is named, and naming nghttp2 conflicts.
        switch (transport, isMentioned(proxyKey)) {
        case (.nghttp2?, true):
            report(
                proxyKey,
                "needs the curl transport, but \(origin(transportKey)) is \"nghttp2\", which has no proxy support; "
                    + "set \(origin(transportKey)) to \"curl\" or leave it unset"
            )
        case (let chosen?, _):
            upstream.transport = chosen
        case (nil, let hasProxy):
            upstream.transport = hasProxy ? .curl : .nghttp2
        }
        if case (let path, let contents)? = file(ConfigurationKey.upstreamCAFile) {
            let certificates = try? NIOSSLCertificate.fromPEMBytes(Array(contents))
            if certificates?.isEmpty ?? true {
                report(ConfigurationKey.upstreamCAFile, "file \(path) holds no PEM certificate")
            } else {
                upstream.caFile = path
            }
        }
        upstream.maxConnections =
            integer(ConfigurationKey.upstreamMaxConnections, minimum: 1) ?? upstream.maxConnections
        upstream.maxConcurrentStreams = integer(ConfigurationKey.upstreamMaxConcurrentStreams, minimum: 1)
        upstream.timeoutMs =
            integer(ConfigurationKey.upstreamTimeoutMs, minimum: Upstream.minimumTimeoutMs) ?? upstream.timeoutMs
        upstream.maxAttempts =
            integer(ConfigurationKey.upstreamMaxAttempts, minimum: 1, maximum: Upstream.attemptLimit)
            ?? upstream.maxAttempts
        upstream.retryWindowSeconds =
            integer(
                ConfigurationKey.upstreamRetryWindowSeconds, minimum: 0, maximum: Upstream.retryWindowLimitSeconds)
            ?? upstream.retryWindowSeconds
        upstream.maxAttemptsAfterTimeout =
            integer(
                ConfigurationKey.upstreamMaxAttemptsAfterTimeout, minimum: 0,
                maximum: Upstream.attemptsAfterTimeoutLimit)
            ?? upstream.maxAttemptsAfterTimeout
        upstream.pingIntervalSeconds =
            integer(
                ConfigurationKey.upstreamPingIntervalSeconds, minimum: 0, maximum: Upstream.pingIntervalLimitSeconds)
            ?? upstream.pingIntervalSeconds
        upstream.pingTimeoutSeconds =
            integer(ConfigurationKey.upstreamPingTimeoutSeconds, minimum: 1, maximum: Upstream.pingTimeoutLimitSeconds)
            ?? upstream.pingTimeoutSeconds
        upstream.maxConnectionAgeSeconds =
            integer(ConfigurationKey.upstreamMaxConnectionAgeSeconds, minimum: Upstream.minimumConnectionAgeSeconds)
            ?? upstream.maxConnectionAgeSeconds
        upstream.idleTimeoutSeconds =
            integer(ConfigurationKey.upstreamIdleTimeoutSeconds, minimum: 1) ?? upstream.idleTimeoutSeconds
        return upstream
    }

    // MARK: - Providers

    /// Apple's team and key ids are 10 upper-case letters and digits.
    private static func isAppleID(_ text: String) -> Bool {
        text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isUppercase || $0.isNumber) }
    }

    /// `[apns]`, or `[apps.<app>.apns]`.
    mutating func apns(app: String = AppName.default) -> RelayConfiguration.APNs? {
        let teamIDKey = ConfigurationKey.apnsTeamID.inApp(app)
        let keyIDKey = ConfigurationKey.apnsKeyID.inApp(app)
        let keyFileKey = ConfigurationKey.apnsKeyFile.inApp(app)
        let topicKey = ConfigurationKey.apnsTopic.inApp(app)
        typealias APNs = RelayConfiguration.APNs
        let environment = choice(ConfigurationKey.apnsEnvironment.inApp(app), default: APNsEnvironment.production)
        let productionEndpoint = endpoint(ConfigurationKey.apnsEndpoint.inApp(app), default: APNs.defaultEndpoint)
        let sandboxEndpoint = endpoint(
            ConfigurationKey.apnsSandboxEndpoint.inApp(app), default: APNs.defaultSandboxEndpoint)

        let credentialKeys = [teamIDKey, keyIDKey, topicKey]
        guard isMentioned(keyFileKey) else {
            // Half a credential is a mistake, not a choice: say so instead of silently leaving APNs off.
            let partial = credentialKeys.filter { isMentioned($0) }.map { origin($0) }
            if !partial.isEmpty {
                let verb = partial.count == 1 ? "is" : "are"
                report(
                    keyFileKey,
                    "required when \(partial.joined(separator: ", ")) \(verb) set; without it APNs is not configured"
                )
            }
            return nil
        }
        for key in credentialKeys where !isMentioned(key) {
            report(key, "required when \(origin(keyFileKey)) is set")
        }

        var teamID = string(teamIDKey)
        if let id = teamID, !Self.isAppleID(id) {
            report(
                teamIDKey,
                "must be 10 upper-case letters and digits, as in \"ABCDE12345\", found \"\(id)\"")
            teamID = nil
        }
        var keyID = string(keyIDKey)
        if let id = keyID, !Self.isAppleID(id) {
            report(
                keyIDKey,
                "must be 10 upper-case letters and digits, as in \"ABC123DEFG\", found \"\(id)\"")
            keyID = nil
        }
        var topic = string(topicKey)
        if let bundleID = topic, bundleID.contains(where: { $0.isWhitespace }) {
            report(topicKey, "must be the app's bundle id, without spaces")
            topic = nil
        }

        var key: (file: String, pem: String)?
        if case (let path, let contents)? = file(keyFileKey),
            let text = secretText(keyFileKey, file: path, contents: contents)
        {
            if (try? P256.Signing.PrivateKey(pemRepresentation: text)) == nil {
                report(
                    keyFileKey,
                    "file \(path) is not a PEM P-256 private key (an APNs .p8 signing key)")
            } else {
                key = (path, text)
            }
        }

        guard let teamID, let keyID, let topic, let key else { return nil }
        return APNs(
            teamID: teamID,
            keyID: keyID,
            keyFile: key.file,
            keyPEM: RelayConfiguration.Secret(key.pem),
            topic: topic,
            environment: environment,
            endpoint: productionEndpoint,
            sandboxEndpoint: sandboxEndpoint
        )
    }

    /// The service-account fields FCM needs.
    private static let serviceAccountFields = ["project_id", "private_key", "client_email", "token_uri"]

    /// `[fcm]`, or `[apps.<app>.fcm]`.
    mutating func fcm(app: String = AppName.default) -> RelayConfiguration.FCM? {
        let key = ConfigurationKey.fcmServiceAccountFile.inApp(app)
        let fcmEndpoint = endpoint(
            ConfigurationKey.fcmEndpoint.inApp(app), default: RelayConfiguration.FCM.defaultEndpoint)
        guard case (let path, let contents)? = file(key) else { return nil }
        // Decoded loosely so a problem can name the missing field; no message quotes a value from the file.
        guard let object = (try? JSONSerialization.jsonObject(with: contents)) as? [String: Any] else {
            report(key, "file \(path) is not a JSON object (expected a Firebase service-account key file)")
            return nil
        }
        if let type = object["type"] as? String, type != "service_account" {
            report(key, "file \(path) is not a service-account key (its type is \"\(type)\", not \"service_account\")")
            return nil
        }
        var fields: [String: String] = [:]
        for field in Self.serviceAccountFields {
            if let value = object[field] as? String, !value.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                fields[field] = value
            }
        }
        let missing = Self.serviceAccountFields.filter { fields[$0] == nil }
        guard missing.isEmpty, let projectID = fields["project_id"], let privateKey = fields["private_key"],
            let clientEmail = fields["client_email"], let tokenURI = fields["token_uri"]
        else {
            report(key, "file \(path) lacks \(missing.joined(separator: ", ")) (expected a service-account key file)")
            return nil
        }
        guard privateKey.contains("-----BEGIN"), privateKey.contains("PRIVATE KEY-----") else {
            report(key, "file \(path) has a private_key that is not a PEM private key")
            return nil
        }
        guard (try? ConfigurationSyntax.endpoint(tokenURI)) != nil else {
            report(key, "file \(path) has a token_uri that is not an https URL")
            return nil
        }
        return RelayConfiguration.FCM(
            serviceAccountFile: path,
            projectID: projectID,
            clientEmail: clientEmail,
            privateKeyID: object["private_key_id"] as? String,
            privateKey: RelayConfiguration.Secret(privateKey),
            tokenURI: tokenURI,
            endpoint: fcmEndpoint
        )
    }

    /// `[expo]`.
    mutating func expo() -> RelayConfiguration.Expo {
        let receiptDelaySeconds =
            integer(ConfigurationKey.expoReceiptDelaySeconds, minimum: 1)
            ?? RelayConfiguration.Expo.defaultReceiptDelaySeconds
        return expo(app: AppName.default, receiptDelaySeconds: receiptDelaySeconds)
    }

    /// `[expo]` or `[apps.<app>.expo]`, with the relay's receipt delay (`expo.receipt_delay_seconds`).
    mutating func expo(app: String, receiptDelaySeconds: Int) -> RelayConfiguration.Expo {
        var expo = RelayConfiguration.Expo(receiptDelaySeconds: receiptDelaySeconds)
        expo.endpoint = endpoint(ConfigurationKey.expoEndpoint.inApp(app), default: expo.endpoint)
        let inlineKey = ConfigurationKey.expoAccessToken.inApp(app)
        let fileKey = ConfigurationKey.expoAccessTokenFile.inApp(app)
        if isMentioned(inlineKey), isMentioned(fileKey) {
            report(fileKey, "set at most one of \(origin(inlineKey)) and \(origin(fileKey))")
            return expo
        }
        var token: String?
        var tokenKey = inlineKey
        if let inline = string(inlineKey) {
            token = inline.trimmingCharacters(in: .whitespacesAndNewlines)
        } else if case (let path, let contents)? = file(fileKey) {
            token = secretText(fileKey, file: path, contents: contents)
            tokenKey = fileKey
        }
        guard let token else { return expo }
        // A token with whitespace or control characters inside would break the Authorization header.
        guard
            !token.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F })
        else {
            report(tokenKey, "the access token contains whitespace or control characters")
            return expo
        }
        expo.accessToken = RelayConfiguration.Secret(token)
        return expo
    }

    mutating func android() -> RelayConfiguration.Android {
        var android = RelayConfiguration.Android()
        if let channel = string(ConfigurationKey.androidCriticalChannelID) {
            android.criticalChannelID = channel
        }
        return android
    }

    // MARK: - Policies

    mutating func limits() -> RateLimits {
        var limits = RateLimits()
        if let rate = number(ConfigurationKey.limitsRatePerSecond) {
            if rate > 0 {
                limits.ratePerSecond = rate
            } else {
                report(ConfigurationKey.limitsRatePerSecond, "must be greater than 0, found \(rate)")
            }
        }
        limits.burst = integer(ConfigurationKey.limitsBurst, minimum: 1) ?? limits.burst
        limits.dailyQuota = integer(ConfigurationKey.limitsDailyQuota, minimum: 1) ?? limits.dailyQuota
        limits.perDevicePerMinute =
            integer(ConfigurationKey.limitsPerDevicePerMinute, minimum: 1) ?? limits.perDevicePerMinute
        limits.criticalReservePerHour =
            integer(ConfigurationKey.limitsCriticalReservePerHour, minimum: 0) ?? limits.criticalReservePerHour
        return limits
    }

    /// `[limits] critical_per_device_per_minute`: the relay's own, not a tenant's.
    mutating func criticalPerDevicePerMinute() -> Int {
        integer(ConfigurationKey.limitsCriticalPerDevicePerMinute, minimum: 1)
            ?? RelayConfiguration.defaultCriticalPerDevicePerMinute
    }

    mutating func audit(store: RelayConfiguration.Store) -> RelayConfiguration.Audit {
        typealias Audit = RelayConfiguration.Audit
        var audit = Audit()
        audit.enabled = boolean(ConfigurationKey.auditEnabled) ?? audit.enabled
        if let instance = string(ConfigurationKey.auditInstance) {
            if instance == Audit.autoInstance {
                (audit.instance, audit.instanceSuffixFile) = Audit.derivedInstance(stateFolder: store.stateFolder)
            } else if let problem = Audit.instanceProblem(instance) {
                report(ConfigurationKey.auditInstance, problem)
            } else {
                audit.instance = instance
            }
        }
        let keyFile = ConfigurationKey.auditSigningKeyFile
        if case (let path, let contents)? = file(keyFile),
            let text = secretText(keyFile, file: path, contents: contents)
        {
            do throws(AuditKeyError) {
                _ = try AuditSigningKey(base64: text)
                audit.signingKeyFile = path
                audit.signingKey = RelayConfiguration.Secret(text)
            } catch {
                // The error names the key's role and sizes, never its bytes.
                report(keyFile, "file \(path) does not hold an audit signing key: \(error)")
            }
        }
        audit.checkpointIntervalSeconds =
            integer(ConfigurationKey.auditCheckpointIntervalSeconds, minimum: 1) ?? audit.checkpointIntervalSeconds
        audit.retentionDays = integer(ConfigurationKey.auditRetentionDays, minimum: 1) ?? audit.retentionDays
        return audit
    }

    mutating func receipts() -> RelayConfiguration.Receipts {
        typealias Receipts = RelayConfiguration.Receipts
        var receipts = Receipts()
        receipts.ttlHours = integer(ConfigurationKey.receiptsTtlHours, minimum: 1) ?? receipts.ttlHours
        receipts.requestDeadlineMs =
            integer(ConfigurationKey.receiptsWaitMs, minimum: Receipts.minimumRequestDeadlineMs)
            ?? receipts.requestDeadlineMs
        return receipts
    }

    mutating func logging() -> RelayConfiguration.Logging {
        var logging = RelayConfiguration.Logging()
        logging.format = choice(ConfigurationKey.loggingFormat, default: logging.format)
        logging.level = choice(ConfigurationKey.loggingLevel, default: logging.level)
        return logging
    }
}
