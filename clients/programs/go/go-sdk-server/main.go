// A sprint board on the official Go SDK's server (github.com/modelcontextprotocol/go-sdk),
// the Go counterpart of clients/programs/python/board_server.py, for the probe.
//
//	go-sdk-server stdio
//	go-sdk-server http PORT   (Streamable HTTP on 127.0.0.1:PORT/mcp)
//
// One resource, board://sprint: its tasks as JSON with a version. The tool
// complete_task marks a task done, moves the version and publishes the change
// with Server.ResourceUpdated, which the SDK sends to 2025 sessions that sent
// resources/subscribe and to 2026-07-28 subscriptions/listen streams that
// named the URI. Both reach it only through ServerOptions.SubscribeHandler
// (with UnsubscribeHandler), which also makes the server advertise
// resources.subscribe. The tool enable_reports adds a sprint_report tool with
// Server.AddTool, which notifies tools/list_changed.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	// boardURI is the one resource the server serves.
	boardURI = "board://sprint"
	// modernEra is the first protocol version without sessions.
	modernEra = "2026-07-28"
)

// board is the sprint's tasks in order, and the version each change moves.
type board struct {
	mu      sync.Mutex
	version int
	names   []string
	done    map[string]bool
}

type taskState struct {
	Name string `json:"name"`
	Done bool   `json:"done"`
}

// text is the board as its resource reads: JSON, with its version.
func (b *board) text() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	tasks := make([]taskState, 0, len(b.names))
	for _, name := range b.names {
		tasks = append(tasks, taskState{name, b.done[name]})
	}
	data, _ := json.Marshal(map[string]any{"board": "sprint", "version": b.version, "tasks": tasks})
	return string(data)
}

// complete marks a task done and moves the version; an unknown task is an error.
func (b *board) complete(task string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, known := b.done[task]; !known {
		return fmt.Errorf("no task %q on the board", task)
	}
	b.done[task] = true
	b.version++
	return nil
}

func (b *board) doneCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	count := 0
	for _, done := range b.done {
		if done {
			count++
		}
	}
	return count
}

type completeInput struct {
	Task string `json:"task" jsonschema:"the task to mark done: design, build or ship"`
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// newServer builds the board's server: the resource, its subscription
// handlers and the two tools.
func newServer() *mcp.Server {
	sprint := &board{
		version: 1,
		names:   []string{"design", "build", "ship"},
		done:    map[string]bool{"design": false, "build": false, "ship": false},
	}
	// The SDK keeps the subscribers itself; the handlers decide who may subscribe.
	onlyTheBoard := func(uri string) error {
		if uri != boardURI {
			return mcp.ResourceNotFoundError(uri)
		}
		return nil
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "sprint-board", Version: "1.0.0"}, &mcp.ServerOptions{
		SubscribeHandler: func(_ context.Context, request *mcp.SubscribeRequest) error {
			return onlyTheBoard(request.Params.URI)
		},
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	server.AddResource(&mcp.Resource{URI: boardURI, Name: "sprint", MIMEType: "application/json"},
		func(_ context.Context, request *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
				{URI: boardURI, MIMEType: "application/json", Text: sprint.text()},
			}}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "complete_task", Description: "Mark a task of the sprint board done"},
		func(ctx context.Context, _ *mcp.CallToolRequest, input completeInput) (*mcp.CallToolResult, any, error) {
			if err := sprint.complete(input.Task); err != nil {
				return nil, nil, err
			}
			err := server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: boardURI})
			return textResult(input.Task + ": done"), nil, err
		})
	mcp.AddTool(server, &mcp.Tool{Name: "enable_reports", Description: "Add the sprint_report tool"},
		func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
			// AddTool replaces a tool of the same name, and notifies either way.
			mcp.AddTool(server, &mcp.Tool{Name: "sprint_report", Description: "How many tasks are done"},
				func(context.Context, *mcp.CallToolRequest, any) (*mcp.CallToolResult, any, error) {
					return textResult(strconv.Itoa(sprint.doneCount()) + " task(s) done"), nil, nil
				})
			return textResult("reporting is live"), nil, nil
		})
	return server
}

// bothEras routes each request by its MCP-Protocol-Version header: a
// StreamableHTTPHandler serves 2026-07-28 only when Stateless, and a stateless
// one keeps no 2025 session (no GET stream for its notifications), so each
// era gets a handler of its own on the same server.
func bothEras(server *mcp.Server) http.Handler {
	serve := func(*http.Request) *mcp.Server { return server }
	sessions := mcp.NewStreamableHTTPHandler(serve, nil)
	stateless := mcp.NewStreamableHTTPHandler(serve, &mcp.StreamableHTTPOptions{Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, request *http.Request) {
		if request.Header.Get("MCP-Protocol-Version") >= modernEra {
			stateless.ServeHTTP(w, request)
		} else {
			sessions.ServeHTTP(w, request)
		}
	})
}

// serveHTTP serves Streamable HTTP on 127.0.0.1:port/mcp until ctx ends.
func serveHTTP(ctx context.Context, server *mcp.Server, port string) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", bothEras(server))
	listener, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
	if err != nil {
		return err
	}
	httpServer := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		httpServer.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "sprint board on http://%s/mcp\n", listener.Addr())
	if err := httpServer.Serve(listener); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	args := os.Args[1:]
	var err error
	switch {
	case len(args) == 1 && args[0] == "stdio":
		err = newServer().Run(ctx, &mcp.StdioTransport{})
	case len(args) == 2 && args[0] == "http":
		if _, bad := strconv.ParseUint(args[1], 10, 16); bad != nil {
			err = fmt.Errorf("not a port: %q", args[1])
			break
		}
		err = serveHTTP(ctx, newServer(), args[1])
	default:
		fmt.Fprintln(os.Stderr, "usage: go-sdk-server stdio | http PORT")
		os.Exit(2)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(os.Stderr, "go-sdk-server: %v\n", err)
		os.Exit(1)
	}
}
