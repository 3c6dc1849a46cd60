/// Recognises which provider a device token belongs to.
///
/// The rules, in order: `ExponentPushToken[…]` or `ExpoPushToken[…]` is Expo; even-length hexadecimal of 64 to 200
/// characters is APNs; 100 to 4096 characters of `[A-Za-z0-9_:-]` is FCM. A 128-character hex string fits both APNs
/// and FCM; it is taken as APNs unless the message names `provider: "fcm"`.
package enum DeviceToken {
    package static let apnsLengths = 64...200
    package static let fcmLengths = 100...4096

    /// The provider a token's shape implies, or `nil` when it fits none.
    package static func inferProvider(_ token: String) -> Provider? {
        if isExpo(token) { return .expo }
        if isAPNs(token) { return .apns }
        if isFCM(token) { return .fcm }
        return nil
    }

    /// Whether the token has the shape `provider` expects.
    package static func matches(_ token: String, provider: Provider) -> Bool {
        switch provider {
        case .apns: isAPNs(token)
        case .fcm: isFCM(token)
        case .expo: isExpo(token)
        }
    }

    package static func isExpo(_ token: String) -> Bool {
        for prefix in ["ExponentPushToken[", "ExpoPushToken["] where token.hasPrefix(prefix) {
            let inner = token.utf8.dropFirst(prefix.utf8.count)
            guard inner.last == UInt8(ascii: "]") else { return false }
            let content = inner.dropLast()
            return !content.isEmpty && content.allSatisfy(isExpoContent)
        }
        return false
    }

    package static func isAPNs(_ token: String) -> Bool {
        let bytes = token.utf8
        return apnsLengths.contains(bytes.count) && bytes.count.isMultiple(of: 2) && bytes.allSatisfy(AuditHex.isDigit)
    }

    package static func isFCM(_ token: String) -> Bool {
        let bytes = token.utf8
        return fcmLengths.contains(bytes.count) && bytes.allSatisfy(isFCMCharacter)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default: false
        }
    }

    private static func isFCMCharacter(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
    }

    private static func isExpoContent(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}
