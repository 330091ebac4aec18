package toolservers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpsrv "github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"
)

// helperEnv makes the test binary a tool server of its own (helperMain):
// the misbehaving servers the lifecycle tests need, which no real server
// can be made to be on demand.
const helperEnv = "DESKHAND_TOOLSERVERS_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		helperMain(mode)
		return
	}
	goleak.VerifyTestMain(m)
}

// helperConfig runs the test binary as a helper server in mode.
func helperConfig(name, mode string) Config {
	return Config{Name: name, Command: os.Args[0], Env: map[string]string{helperEnv: mode}}
}

func helperMain(mode string) {
	switch mode {
	case "exit":
		fmt.Fprintln(os.Stderr, "boom: cannot read /nonexistent/config.json")
		os.Exit(3)
	case "garbage":
		fmt.Println("Hello! I am a chatty server and I print banners on stdout.")
		_, _ = io_Copy(os.Stdin)
		os.Exit(0)
	case "sleeper":
		time.Sleep(24 * time.Hour) // a grandchild that would outlive its parent
		os.Exit(0)
	case "mcp":
		serveHelper()
		os.Exit(0)
	case "stubborn":
		// Neither its stdin's end nor a broken stderr pipe ends it.
		signal.Ignore(syscall.SIGPIPE, syscall.SIGHUP)
		serveHelper()
		time.Sleep(24 * time.Hour) // does not exit when its stdin closes
		os.Exit(0)
	case "manager":
		// A Deskhand stand-in: it runs a tool server, says its pid, and
		// waits to be killed.
		m := New(Options{})
		if err := m.Set([]Config{helperConfig("helper", "stubborn")}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if _, err := m.Tools(context.Background(), "helper"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(m.Status()[0].PID)
		time.Sleep(24 * time.Hour)
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	os.Exit(2)
}

// io_Copy reads r to its end.
func io_Copy(r *os.File) (int64, error) {
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err != nil {
			return n, err
		}
	}
}

// helperServer is an mcp-go server with the tools the lifecycle tests
// call: echo, fail (an isError result), big, image, sleep (runs until
// cancelled), cancelled (answers once a sleep was cancelled), add_tool
// (changes the list), spawn (starts a grandchild), elicit.
func helperServer() *mcpsrv.MCPServer {
	//lint:ignore SA1019 the helper asks as today's servers do, with a request of its own.
	s := mcpsrv.NewMCPServer("helper", "1", mcpsrv.WithToolCapabilities(true), mcpsrv.WithLegacyServerInitiatedRequests())
	var cancelledOnce sync.Once
	cancelled := make(chan string)
	readOnly := true
	s.AddTool(mcp.NewTool("echo", mcp.WithString("message", mcp.Required()), mcp.WithReadOnlyHintAnnotation(readOnly)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("message", "")), nil
		})
	s.AddTool(mcp.NewTool("fail"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("the thing you asked for does not exist"), nil
	})
	s.AddTool(mcp.NewTool("die"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "die: out of memory, giving up")
		os.Exit(7)
		return nil, nil
	})
	s.AddTool(mcp.NewTool("big"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("é", 3000)), nil
	})
	s.AddTool(mcp.NewTool("image"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("a picture:"),
			mcp.NewImageContent(strings.Repeat("AAAA", 3072), "image/png")}}, nil
	})
	s.AddTool(mcp.NewTool("sleep"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
			_ = mcpsrv.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress",
				map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": 1, "total": 2, "message": "sleeping"})
		}
		<-ctx.Done()
		fmt.Fprintln(os.Stderr, "sleep: cancelled:", context.Cause(ctx))
		cancelledOnce.Do(func() { close(cancelled) })
		return mcp.NewToolResultText("woke up"), nil
	})
	s.AddTool(mcp.NewTool("cancelled"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-cancelled:
			return mcp.NewToolResultText("the sleep was cancelled"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	s.AddTool(mcp.NewTool("add_tool"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.AddTool(mcp.NewTool("extra", mcp.WithDescription("added later")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("extra"), nil
		})
		return mcp.NewToolResultText("added"), nil
	})
	s.AddTool(mcp.NewTool("spawn"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=sleeper")
		if err := cmd.Start(); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(fmt.Sprint(cmd.Process.Pid)), nil
	})
	s.AddTool(mcp.NewTool("elicit"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := mcpsrv.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Message: "Your name?", RequestedSchema: map[string]any{"type": "object",
				"properties": map[string]any{"name": map[string]any{"type": "string"}}}}})
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(fmt.Sprintf("%s %v", res.Action, res.Content)), nil
	})
	return s
}

func serveHelper() {
	fmt.Fprintln(os.Stderr, "helper: serving on stdio")
	err := mcpsrv.NewStdioServer(helperServer()).Listen(context.Background(), os.Stdin, os.Stdout)
	fmt.Fprintln(os.Stderr, "helper: stdin closed:", err)
}
