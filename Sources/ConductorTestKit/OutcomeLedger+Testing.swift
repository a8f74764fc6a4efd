// Only where Swift Testing exists, so the rest of the kit links into XCTest targets and
// test-support targets that have no Swift Testing.
#if canImport(Testing)
    public import Testing

    extension OutcomeLedger {
        /// Records an `Issue` in the current Swift Testing test for each of the ledger's
        /// ``violations``. Call once everything has settled.
        public func verify(sourceLocation: SourceLocation = #_sourceLocation) {
            for violation in violations {
                Issue.record("\(violation)", sourceLocation: sourceLocation)
            }
        }
    }
#endif
