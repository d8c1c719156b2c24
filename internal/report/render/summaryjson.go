package render

import (
	"encoding/json"
	"fmt"

	"vigil/internal/wire"
)

// SummaryJSON encodes summary.json and checks it against
// internal/wire/summary.schema.json.
func SummaryJSON(s *wire.Summary) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("summary.json: %v", err)
	}
	b = append(b, '\n')
	if err := wire.Validate("summary", b); err != nil {
		return nil, fmt.Errorf("summary.json does not match its schema: %v", err)
	}
	return b, nil
}
