package tfx

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// A long wait says in the log what it waits for, what it last saw and the
// time left, at most every progressEvery.
func TestWaitReportsProgressInTheLog(t *testing.T) {
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 20 * time.Millisecond
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(tflogtest.RootLogger(context.Background(), &out), time.Minute)
	defer cancel()
	start := time.Now()
	w := StartWait(ctx, "the device d to join the tailnet")
	for time.Since(start) < 60*time.Millisecond {
		if err := w.Sleep(ctx, 5*time.Millisecond, "no device of that name"); err != nil {
			t.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	entries, err := tflogtest.MultilineJSONDecode(&out)
	if err != nil {
		t.Fatal(err)
	}
	// A start, then one report per progressEvery at most.
	if reports, most := len(entries)-1, int(elapsed/progressEvery); reports < 1 || reports > most {
		t.Fatalf("%d progress reports in %s reported every %s, want 1 to %d: %v", reports, elapsed, progressEvery, most, entries)
	}
	if entries[0]["@message"] != "waiting for the device d to join the tailnet" || entries[0]["@level"] != "info" {
		t.Errorf("first entry %v", entries[0])
	}
	last := entries[len(entries)-1]
	if msg, _ := last["@message"].(string); !strings.HasPrefix(msg, "still waiting for the device d") || last["last_seen"] != "no device of that name" ||
		last["timeout_left"] == nil || last["elapsed"] == nil {
		t.Errorf("progress entry %v", last)
	}
}
