package capture

// arm64 has only the *at forms.
func legacyCalls() map[int]sysdesc { return nil }

var legacyNames = map[int32]string{}
