// Package watch calls back when a file changes, from file-system events on its directory,
// debounced: editors write in several steps (truncate + write, delete + re-create, rename over).
package watch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Options configures File.
type Options struct {
	// Path is the watched file; its directory must exist, the file need not.
	Path string
	// What names the file in errors and logs ("lvmd config").
	What string
	// Debounce is how long the file must be quiet before sync is called.
	Debounce time.Duration
	Logger   *slog.Logger
}

// File calls sync once at start, then whenever the file has been quiet for Debounce after a
// change (or after a watcher error, which may have lost events), until ctx ends. It returns nil
// when ctx ends and an error only when the watch cannot be set up or the watcher closes.
func File(ctx context.Context, o Options, sync func(context.Context)) error {
	path, debounce := filepath.Clean(o.Path), o.Debounce
	dir := filepath.Dir(path)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s %s: %w", o.What, path, err)
	}
	defer w.Close()
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("watching %s directory %s: %w", o.What, dir, err)
	}
	sync(ctx)
	timer := time.NewTimer(debounce)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New(o.What + " watcher closed")
			}
			if filepath.Clean(ev.Name) == path {
				timer.Reset(debounce)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return errors.New(o.What + " watcher closed")
			}
			// An event queue overflow loses events: re-read to be safe.
			o.Logger.Warn(o.What+" watcher error; re-reading", "path", path, "error", err)
			timer.Reset(debounce)
		case <-timer.C:
			sync(ctx)
		}
	}
}
