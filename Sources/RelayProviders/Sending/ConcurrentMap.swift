/// Runs `operation` for every element concurrently and returns the results in the elements' order.
func concurrentMap<Element: Sendable, Result: Sendable>(
    _ elements: [Element],
    _ operation: @escaping @Sendable (Element) async -> Result
) async -> [Result] {
    await withTaskGroup(of: (Int, Result).self) { group in
        for (index, element) in elements.enumerated() {
            group.addTask { (index, await operation(element)) }
        }
        var results = [Result?](repeating: nil, count: elements.count)
        for await (index, result) in group { results[index] = result }
        return results.compactMap { $0 }
    }
}
