import ArgumentParser

@main
struct RelayBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay-bench",
        abstract: "PushRelay benchmarks; figures are recorded in Docs/benchmarks.md."
    )
}
