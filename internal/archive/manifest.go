package archive

// Manifest is manifest.json.
type Manifest struct {
	Schema       string          `json:"schema"` // evidence.ManifestSchema
	RunID        string          `json:"run_id"`
	VigilVersion string          `json:"vigil_version"`
	Entries      []ManifestEntry `json:"entries"` // sorted by Path
}

// ManifestEntry describes one entry after the manifest.
type ManifestEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"` // lower-case hex
	Bytes  int64  `json:"bytes"`
}
