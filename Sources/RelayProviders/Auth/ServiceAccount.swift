package import Foundation

/// The fields of a Google service-account JSON file that FCM needs.
package struct ServiceAccount: Sendable, Equatable, Decodable {
    package var projectID: String
    package var privateKeyID: String?
    package var privateKey: String
    package var clientEmail: String
    package var tokenURI: String

    enum CodingKeys: String, CodingKey {
        case projectID = "project_id"
        case privateKeyID = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    package init(projectID: String, privateKeyID: String?, privateKey: String, clientEmail: String, tokenURI: String) {
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
    }

    /// Parses the JSON file's contents.
    package static func parse(_ data: Data) throws -> ServiceAccount {
        try JSONDecoder().decode(ServiceAccount.self, from: data)
    }
}
