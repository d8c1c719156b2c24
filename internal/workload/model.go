package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Message is one entry of the conversation the agent sends to the model.
type Message struct {
	Role       string // "user", "assistant" or "tool"
	Content    string
	ToolCallID string // for role "tool"
	ToolCalls  []ToolCall
}

// ToolCall is a model's request to run one tool.
type ToolCall struct {
	ID   string
	Name string
	Args map[string]string
}

// ModelResponse is one model turn: either tool calls or a final answer.
type ModelResponse struct {
	ID           string
	Model        string
	Content      string
	ToolCalls    []ToolCall
	FinishReason string // "tool_calls" or "stop"
	InputTokens  int
	OutputTokens int
}

// notesPath is the workspace file the script writes and reads back.
const notesPath = "notes/plan.md"

// notesText is what the scripted model asks write_file to store.
const notesText = "# plan\n\n1. record the plan\n2. read it back\n3. answer with its checksum\n"

// scriptedModel is the fake model: it answers from a fixed script, so the
// same conversation always gets the same response, with token counts
// derived from the text lengths. It needs no network and no weights.
type scriptedModel struct {
	turn int
}

func (m *scriptedModel) chat(msgs []Message) (ModelResponse, error) {
	m.turn++
	r := ModelResponse{ID: fmt.Sprintf("resp_%d", m.turn), Model: ModelName}
	switch m.turn {
	case 1:
		r.ToolCalls = []ToolCall{{ID: "call_1", Name: "write_file", Args: map[string]string{"path": notesPath, "content": notesText}}}
		r.FinishReason = "tool_calls"
	case 2:
		r.ToolCalls = []ToolCall{{ID: "call_2", Name: "read_file", Args: map[string]string{"path": notesPath}}}
		r.FinishReason = "tool_calls"
	case 3:
		last := msgs[len(msgs)-1]
		if last.Role != "tool" {
			return r, fmt.Errorf("scripted model: turn 3 expects a tool result, got role %q", last.Role)
		}
		sum := sha256.Sum256([]byte(last.Content))
		r.Content = fmt.Sprintf("Recorded the plan in %s and read back %d bytes (sha256 %s).", notesPath, len(last.Content), hex.EncodeToString(sum[:8]))
		r.FinishReason = "stop"
	default:
		return r, fmt.Errorf("scripted model: no turn %d in the script", m.turn)
	}
	for _, msg := range msgs {
		r.InputTokens += tokens(msg.Content)
		for _, tc := range msg.ToolCalls {
			r.InputTokens += toolCallTokens(tc)
		}
	}
	r.OutputTokens = tokens(r.Content)
	for _, tc := range r.ToolCalls {
		r.OutputTokens += toolCallTokens(tc)
	}
	return r, nil
}

// tokens approximates a tokenizer deterministically: one token per four
// bytes, at least one per message.
func tokens(s string) int { return len(s)/4 + 1 }

func toolCallTokens(tc ToolCall) int {
	n := tokens(tc.Name)
	for k, v := range tc.Args {
		n += tokens(k) + tokens(v)
	}
	return n
}
