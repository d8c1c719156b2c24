//go:build linux

package capture

// arm64 has only the *at forms.
func legacyCalls() map[int]sysdesc { return nil }

var legacyNames = map[int32]string{}

// compatCalls: 32-bit (AArch32) tasks are not counted on arm64; the
// coverage says so.
func compatCalls() map[int]sysdesc { return nil }
