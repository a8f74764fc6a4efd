/// The harmonizer's sleeps, as a test clock tells them apart.
extension SleepPurpose {
    /// A harmonizer's (or a harmonizer registry's) timeout.
    package static let harmonizerTimeout = SleepPurpose("harmonizerTimeout")
}
