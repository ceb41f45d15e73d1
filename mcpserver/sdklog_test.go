package mcpserver

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestSDKLogger(t *testing.T) {
	for _, tt := range []struct {
		level slog.Level
		want  []string
	}{
		{slog.LevelInfo, []string{"level=WARN msg=warned", "level=ERROR msg=failed"}},
		{slog.LevelDebug, []string{"level=DEBUG msg=connected", "level=WARN msg=warned", "level=ERROR msg=failed"}},
	} {
		var buf bytes.Buffer
		l := SDKLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level})))
		l.Info("connected", "session_id", "")
		l.Warn("warned")
		l.Error("failed")
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			_, rest, _ := strings.Cut(line, " ") // the time
			rest, _, _ = strings.Cut(rest, " session_id")
			got = append(got, rest)
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("at %v: %q, want %q", tt.level, got, tt.want)
		}
	}
}
