import Foundation
import Testing

@testable import pushrelay

/// The monitoring PushRelay ships (deploy/prometheus/alerts.yml, deploy/grafana/pushrelay.json) names only metrics
/// the relay exports: every metric name in their PromQL is a family of ``MetricCatalogue`` (a histogram's through its
/// `_bucket`, `_sum` and `_count` series) or Prometheus's own `up`. That the rules fire when they should is
/// scripts/alerts-test.sh's (promtool).
@Suite struct MonitoringTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Series Prometheus itself makes for every scrape target.
    static let prometheusOwn: Set<String> = ["up"]

    /// PromQL's words that look like names: aggregation modifiers, set operators, vector matching, `bool`, `offset`.
    static let keywords: Set<String> = [
        "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset",
        "inf", "nan",
    ]

    /// The metric names in a PromQL expression (Grafana's `$variables` allowed): identifiers that are not functions,
    /// keywords, label names (inside `{…}`, or the list after `by`, `without`, `on`, `ignoring`, `group_…`), strings
    /// or durations. `label_values(metric, label)` (a Grafana variable's query) yields its metric.
    static func metricNames(in expression: String) -> Set<String> {
        var text = expression
        // Strings, label matchers, ranges and Grafana's variables hold no metric name.
        for pattern in [#""(?:[^"\\]|\\.)*""#, #"'(?:[^'\\]|\\.)*'"#, #"\{[^}]*\}"#, #"\[[^\]]*\]"#, #"\$\{?\w+\}?"#] {
            text = text.replacingOccurrences(of: pattern, with: " ", options: .regularExpression)
        }
        // The label lists of grouping and matching clauses.
        text = text.replacingOccurrences(
            of: #"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)"#, with: " ",
            options: .regularExpression)
        // label_values(metric, label): the label is no metric.
        text = text.replacingOccurrences(
            of: #"label_values\s*\(\s*([A-Za-z_:][A-Za-z0-9_:]*)\s*,[^)]*\)"#, with: "$1", options: .regularExpression)
        var names: Set<String> = []
        guard let identifier = try? NSRegularExpression(pattern: #"[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?"#) else {
            return []
        }
        let range = NSRange(text.startIndex..., in: text)
        for match in identifier.matches(in: text, range: range) {
            guard match.range(at: 1).location == NSNotFound else { continue }  // a function
            let start = text.index(text.startIndex, offsetBy: match.range.location)
            // Part of a number (1e3, 0x1f) or a duration (5m), not a name.
            if start > text.startIndex, text[text.index(before: start)].isNumber { continue }
            let name = (text as NSString).substring(with: match.range)
            if !keywords.contains(name.lowercased()) { names.insert(name) }
        }
        return names
    }

    /// Whether the relay exports `name`: a family, a histogram family's `_bucket`, `_sum` or `_count`, or `up`.
    static func isExported(_ name: String) -> Bool {
        if prometheusOwn.contains(name) || MetricCatalogue.byName[name] != nil { return true }
        for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
            if MetricCatalogue.byName[String(name.dropLast(suffix.count))]?.type == "histogram" { return true }
        }
        return false
    }

    /// Every `expr` of the dashboard's panels and every variable's query.
    static func dashboardExpressions() throws -> [String] {
        let data = try Data(contentsOf: repository.appendingPathComponent("deploy/grafana/pushrelay.json"))
        var expressions: [String] = []
        func walk(_ node: Any) {
            if let object = node as? [String: Any] {
                if let expression = object["expr"] as? String { expressions.append(expression) }
                if let query = object["query"] as? String, query.contains("(") { expressions.append(query) }
                object.values.forEach(walk)
            } else if let array = node as? [Any] {
                array.forEach(walk)
            }
        }
        walk(try JSONSerialization.jsonObject(with: data))
        return expressions
    }

    /// Every `expr:` of the alert rules, inline or as a folded block (`expr: >-` and the lines indented below it).
    static func alertExpressions() throws -> [String] {
        let text = try String(
            contentsOf: repository.appendingPathComponent("deploy/prometheus/alerts.yml"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var expressions: [String] = []
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard let colon = line.range(of: "expr:"), line[..<colon.lowerBound].allSatisfy(\.isWhitespace) else {
                continue
            }
            let indent = line.prefix { $0 == " " }.count
            let rest = line[colon.upperBound...].trimmingCharacters(in: .whitespaces)
            guard rest.hasPrefix(">") || rest.hasPrefix("|") else {
                expressions.append(rest)
                continue
            }
            var block: [String] = []
            while index < lines.count,
                lines[index].prefix(while: { $0 == " " }).count > indent
                    || lines[index].trimmingCharacters(in: .whitespaces).isEmpty
            {
                block.append(lines[index].trimmingCharacters(in: .whitespaces))
                index += 1
            }
            expressions.append(block.joined(separator: " "))
        }
        return expressions
    }

    @Test func theNameExtractorFindsMetricsAndOnlyThem() {
        #expect(
            Self.metricNames(
                in: #"histogram_quantile(0.99, sum by (le, route) (rate(relay_http_request_duration_seconds_bucket"#
                    + #"{job="pushrelay", route=~"/v1/push|x"}[$__rate_interval])))"#)
                == ["relay_http_request_duration_seconds_bucket"])
        #expect(
            Self.metricNames(in: #"a_total > 0 unless on (instance) b{x="y"} offset 5m and c / ignoring(le) d > 1e3"#)
                == ["a_total", "b", "c", "d"])
        #expect(
            Self.metricNames(in: #"label_values(relay_build_info{job="pushrelay"}, instance)"#) == ["relay_build_info"])
        #expect(Self.isExported("relay_upstream_duration_seconds_count"))
        #expect(!Self.isExported("relay_pushes_total_count"), "a counter has no _count series")
        #expect(!Self.isExported("relay_push_total"))
    }

    @Test func theDashboardNamesOnlyExportedMetrics() throws {
        let expressions = try Self.dashboardExpressions()
        #expect(expressions.count > 20, "the dashboard's panels were found")
        var used: Set<String> = []
        for expression in expressions {
            let names = Self.metricNames(in: expression)
            #expect(!names.isEmpty, "a metric in \(expression)")
            for name in names { #expect(Self.isExported(name), "\(name) in the dashboard's \(expression)") }
            used.formUnion(names)
        }
        for family in ["relay_pushes_total", "relay_upstream_circuit_state", "relay_journal_entries"] {
            #expect(used.contains(family), "the dashboard shows \(family)")
        }
    }

    @Test func theAlertRulesNameOnlyExportedMetrics() throws {
        let expressions = try Self.alertExpressions()
        #expect(expressions.count >= 10, "the rules were found: \(expressions)")
        var used: Set<String> = []
        for expression in expressions {
            let names = Self.metricNames(in: expression)
            #expect(!names.isEmpty, "a metric in \(expression)")
            for name in names { #expect(Self.isExported(name), "\(name) in the alert rule \(expression)") }
            used.formUnion(names)
        }
        for family in [
            "up", "relay_store_unsaved_writes", "relay_store_commit_failures_total", "relay_queue_full_total",
            "relay_upstream_circuit_state", "relay_critical_reserve_exhausted_total",
        ] {
            #expect(used.contains(family), "an alert on \(family)")
        }
    }
}
