import ServiceLifecycle

/// Closes a ``PostgresStore``'s connections when the service group shuts down.
///
/// The store's pool runs from ``PostgresStore/start()`` on, before the group exists (the store is opened and migrated
/// first). List this service first, so that it stops last: after the delivery queue has drained and the maintenance
/// service has written its final key usage.
package struct PostgresStoreService: Service, CustomStringConvertible {
    package let store: PostgresStore

    package init(store: PostgresStore) {
        self.store = store
    }

    package var description: String { "PostgresStoreService" }

    package func run() async {
        // Returns on graceful shutdown, or at once when the group cancels its services.
        try? await gracefulShutdown()
        await store.shutdown()
    }
}
