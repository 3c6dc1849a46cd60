import ArgumentParser

@main
struct RelayBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay-bench",
        abstract: "PushRelay benchmarks; figures and the commands that made them are in Docs/benchmarks.md.",
        subcommands: [TransportBenchmark.self, RelayBenchmark.self, FaultBenchmark.self, HostileBenchmark.self]
    )
}
