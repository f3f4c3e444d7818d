// An app on the official Go SDK client (github.com/modelcontextprotocol/go-sdk),
// the Go counterpart of clients/programs/node/mcp-client.mjs: it connects over
// Streamable HTTP (or starts the server over stdio), lists, reads, subscribes,
// waits for notifications/resources/updated and reads again, printing the
// same fact lines, one `key value` a line.
//
//	go-sdk app --url URL [--era 2025|2026-07-28] [--wait SECONDS]
//	go-sdk app --stdio [--era …] [--wait …] -- COMMAND [ARGS…]
//
// 2025: ClientSessionOptions.ProtocolVersion 2025-11-25 (a plain initialize),
// then ClientSession.Subscribe, a resources/subscribe. 2026-07-28: the SDK's
// default (server/discover), where Subscribe opens a subscriptions/listen
// naming the URI. ClientOptions.ResourceUpdatedHandler gets the update in both.
//
// The catalog: it lists tools, prompts and resources at connect; the SDK's
// list-changed handlers (which, in 2026-07-28, make Connect open a listen
// asking for those lists) mark a list as changed, and once the update has come
// the app lists each changed list again and uses what is new in it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	module = "github.com/modelcontextprotocol/go-sdk"
	// The lab's resource.
	uri = "test://review/status"
	// How long a list-changed notification gets to follow the update: the lab
	// sends it right after notifications/resources/updated.
	listChangedGrace = 2 * time.Second
)

// show is server text JSON-quoted (no raw control characters), cut to 200.
func show(value string) string {
	quoted := strconv.Quote(value)
	if len(quoted) > 200 {
		return quoted[:200]
	}
	return quoted
}

// moduleVersion is the SDK's version as built into this binary.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == module {
				return dep.Version
			}
		}
	}
	return "unknown"
}

type options struct {
	url    string
	era    string
	wait   time.Duration
	server []string
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: go-sdk app --url URL [--era 2025|2026-07-28] [--wait S]")
	fmt.Fprintln(os.Stderr, "       go-sdk app --stdio [--era …] [--wait S] -- COMMAND [ARG…]")
	os.Exit(2)
}

func parseOptions(args []string) options {
	if len(args) < 1 || args[0] != "app" {
		usage()
	}
	flags := flag.NewFlagSet("go-sdk", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	url := flags.String("url", "", "")
	era := flags.String("era", "2025", "")
	wait := flags.Float64("wait", 15, "")
	stdio := flags.Bool("stdio", false, "")
	if flags.Parse(args[1:]) != nil {
		usage()
	}
	server := flags.Args()
	usable := (*url != "" && !*stdio) || (*stdio && len(server) > 0)
	if !usable || !slices.Contains([]string{"2025", "2026-07-28"}, *era) || *wait <= 0 {
		usage()
	}
	if !*stdio {
		server = nil
	}
	return options{*url, *era, time.Duration(*wait * float64(time.Second)), server}
}

func main() {
	os.Exit(runApp(parseOptions(os.Args[1:])))
}

// catalogKinds are the lists the app watches, in the lab's order.
var catalogKinds = []string{"tools", "prompts", "resources"}

// app is one run's state: which lists changed, and what each held at first.
type app struct {
	status  int
	updated chan struct{}
	changed map[string]chan struct{}
	first   map[string][]string
}

// step runs one step, printing `error <name> …` when it fails.
func (a *app) step(name string, run func() error) bool {
	if err := run(); err != nil {
		a.status = 1
		fmt.Printf("error %s %s\n", name, show(err.Error()))
		return false
	}
	return true
}

// notified closes a signal once, however often the server sends it.
func notified(signal chan struct{}) {
	select {
	case <-signal:
	default:
		close(signal)
	}
}

func (a *app) clientOptions() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, request *mcp.ResourceUpdatedNotificationRequest) {
			if request.Params != nil && request.Params.URI == uri {
				notified(a.updated)
			}
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			notified(a.changed["tools"])
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) {
			notified(a.changed["prompts"])
		},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			notified(a.changed["resources"])
		},
	}
}

func runApp(opts options) int {
	a := &app{
		updated: make(chan struct{}),
		changed: map[string]chan struct{}{},
		first:   map[string][]string{},
	}
	for _, kind := range catalogKinds {
		a.changed[kind] = make(chan struct{})
	}
	fmt.Printf("library %s@%s\n", module, moduleVersion())
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "lab-library-go-sdk", Version: "1.0.0"}, a.clientOptions())
	var transport mcp.Transport = &mcp.StreamableClientTransport{Endpoint: opts.url}
	mode := "http"
	if opts.server != nil {
		transport = &mcp.CommandTransport{Command: exec.Command(opts.server[0], opts.server[1:]...)}
		mode = "stdio"
	}
	sessionOptions := &mcp.ClientSessionOptions{}
	if opts.era == "2025" {
		sessionOptions.ProtocolVersion = "2025-11-25"
	}
	var session *mcp.ClientSession
	connected := a.step("connect", func() error {
		var err error
		session, err = client.Connect(ctx, transport, sessionOptions)
		if err != nil {
			return err
		}
		spoken := "2025"
		if session.InitializeResult().ProtocolVersion >= "2026-07-28" {
			spoken = "2026-07-28"
		}
		if spoken != opts.era {
			return fmt.Errorf("asked for %s, spoke %s", opts.era, spoken)
		}
		fmt.Printf("connected %s %s\n", mode, spoken)
		return nil
	})
	if !connected {
		return a.status
	}
	a.listCatalog(ctx, session)
	a.resourceSteps(ctx, session, opts)
	a.catalogSteps(ctx, session)
	a.step("close", session.Close)
	return a.status
}

// resourceSteps: list, read, subscribe, wait for the update, read again.
func (a *app) resourceSteps(ctx context.Context, session *mcp.ClientSession, opts options) {
	a.step("list", func() error {
		names, err := a.list(ctx, session, "resources")
		if err == nil {
			found := "none"
			if slices.Contains(names, uri) {
				found = uri
			}
			fmt.Printf("resource-found %s\n", found)
		}
		return err
	})
	read := func(label string) func() error {
		return func() error {
			result, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err == nil {
				text := ""
				if len(result.Contents) > 0 && result.Contents[0] != nil {
					text = result.Contents[0].Text
				}
				fmt.Printf("%s %s\n", label, show(text))
			}
			return err
		}
	}
	a.step("read", read("initial"))
	a.step("subscribe", func() error {
		err := session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
		if err == nil {
			fmt.Println("subscribed session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})")
		}
		return err
	})
	select {
	case <-a.updated:
		fmt.Printf("notification-received %s via=ClientOptions.ResourceUpdatedHandler\n", uri)
	case <-time.After(opts.wait):
		fmt.Printf("notification-received none after=%gs\n", opts.wait.Seconds())
	}
	a.step("reread", read("final"))
}

// list returns a list's names (resources by URI) and, the first time, keeps them.
func (a *app) list(ctx context.Context, session *mcp.ClientSession, kind string) ([]string, error) {
	var names []string
	switch kind {
	case "tools":
		result, err := session.ListTools(ctx, nil)
		if err != nil {
			return nil, err
		}
		for _, tool := range result.Tools {
			names = append(names, tool.Name)
		}
	case "prompts":
		result, err := session.ListPrompts(ctx, nil)
		if err != nil {
			return nil, err
		}
		for _, prompt := range result.Prompts {
			names = append(names, prompt.Name)
		}
	default:
		result, err := session.ListResources(ctx, nil)
		if err != nil {
			return nil, err
		}
		for _, resource := range result.Resources {
			names = append(names, resource.URI)
		}
	}
	if _, kept := a.first[kind]; !kept {
		a.first[kind] = names
	}
	return names, nil
}

// use calls a new tool, gets a new prompt or reads a new resource.
func use(ctx context.Context, session *mcp.ClientSession, kind, name string) error {
	switch kind {
	case "tools":
		result, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		if err == nil && result.IsError {
			err = errors.New("the tool answered with isError")
		}
		return err
	case "prompts":
		_, err := session.GetPrompt(ctx, &mcp.GetPromptParams{Name: name})
		return err
	default:
		_, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: name})
		return err
	}
}

// listCatalog lists tools and prompts at connect, before anything changes
// (resources are listed by the resource steps).
func (a *app) listCatalog(ctx context.Context, session *mcp.ClientSession) {
	for _, kind := range catalogKinds[:2] {
		a.step("list-"+kind, func() error {
			names, err := a.list(ctx, session, kind)
			if err == nil {
				fmt.Printf("%s-listed %d\n", kind, len(names))
			}
			return err
		})
	}
}

// catalogSteps: each list changed since connect (its handler ran, or runs
// within the grace), listed again, and whatever is new in it used.
func (a *app) catalogSteps(ctx context.Context, session *mcp.ClientSession) {
	// One deadline for all three lists: its Done stays closed once past.
	grace, cancel := context.WithTimeout(ctx, listChangedGrace)
	defer cancel()
	for _, kind := range catalogKinds {
		select {
		case <-a.changed[kind]:
		case <-grace.Done():
			fmt.Printf("%s-changed none\n", kind)
			continue
		}
		fmt.Printf("%s-changed via=ClientOptions.%sListChangedHandler\n", kind, handlerName(kind))
		a.step("relist-"+kind, func() error {
			names, err := a.list(ctx, session, kind)
			if err != nil {
				return err
			}
			for _, name := range names {
				if slices.Contains(a.first[kind], name) {
					continue
				}
				fmt.Printf("%s-new %s\n", kind, show(name))
				a.step("use-"+kind, func() error {
					err := use(ctx, session, kind, name)
					if err == nil {
						fmt.Printf("%s-used %s\n", kind, show(name))
					}
					return err
				})
			}
			return nil
		})
	}
}

func handlerName(kind string) string {
	return map[string]string{"tools": "Tool", "prompts": "Prompt", "resources": "Resource"}[kind]
}
