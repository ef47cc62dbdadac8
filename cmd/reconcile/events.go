package main

import (
	"time"

	"github.com/reconcile-dev/reconcile/engine/apply"
	"github.com/reconcile-dev/reconcile/engine/render"
	"github.com/reconcile-dev/reconcile/resources"
)

// streams reports whether the command takes --output jsonl.
func streams(cmd string) bool {
	return cmd == "plan" || cmd == "apply" || cmd == "destroy"
}

// startEvents starts the event stream of --output jsonl on stdout, with its
// version event, and sends there the retries of the cloud calls made
// outside operations (a plan's refresh, its lookups), which otherwise go
// to stderr as "Retrying:" lines.
func (c *cli) startEvents(cmd string) {
	c.events = render.NewEventStream(stdoutOf{c}, time.Now)
	c.events.Start(version, cmd)
	c.ctx = resources.WithProgress(c.ctx, func(ev resources.ProgressEvent) {
		if ev.Retry != nil {
			c.events.Retry(ev.Node, *apply.ReportedRetry(*ev.Retry))
		}
	})
}

// stdoutOf writes to the command's stdout as it is at the time of the
// write: the specs, once loaded, put the redaction of their secrets in
// front of it (see redactSecrets), and the stream started before.
type stdoutOf struct{ c *cli }

func (w stdoutOf) Write(p []byte) (int, error) { return w.c.stdout.Write(p) }
