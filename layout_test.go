package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type pkgInfo struct {
	ImportPath string
	Dir        string
	Deps       []string
	Imports    []string
	Doc        string
	GoFiles    []string
}

// listPackages describes every package of the module.
func listPackages(t *testing.T) []pkgInfo {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var p pkgInfo
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

const module = "github.com/deskhand/deskhand/"

// TestImportRules enforces the "may import" column of DESIGN.md §1.
func TestImportRules(t *testing.T) {
	// forbidden[pkg] lists import-path prefixes pkg must not depend on.
	adapters := []string{module + "store", module + "models", module + "ui", module + "assets", module + "server/mcpserver", module + "server/control"}
	forbidden := map[string][]string{
		"server/agent":     append(adapters, "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/zalando/go-keyring", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama", "net/http"),
		"server/mcpserver": {module + "store", module + "models", module + "ui", "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		"server/tools":     {module + "store", module + "models", module + "ui", module + "server/mcpserver", module + "server/control", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		// The command line runs what main hands it: no GUI, no database, no models, no MCP server.
		"ui/cli": {module + "store", module + "models", module + "server/mcpserver", module + "server/bridge", module + "server/tools", module + "ui/desktop", module + "assets", "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		// What the desktop needs of each OS, fyne-free so that CI type-checks it for every OS.
		"ui/desktop/platform": {module + "store", module + "models", module + "server/mcpserver", module + "server/control", module + "server/tools", module + "ui/connect", module + "ui/cli", module + "assets", "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		"ui/desktop":          {module + "store", module + "models", module + "server/mcpserver", module + "server/control", module + "server/tools", module + "ui/connect", "database/sql", "github.com/mattn/go-sqlite3", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		// The desktop's side of its seam with the client-config writers.
		"ui/desktop/connector": {module + "store", module + "models", module + "server/mcpserver", module + "server/control", module + "server/tools", module + "ui/cli", "database/sql", "github.com/mattn/go-sqlite3", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		"assets":               {module + "store", module + "models", module + "server", module + "ui", "database/sql", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama"},
		// mcp-go's client pulls its server package in (for in-process clients).
		"ui/connect": {module + "store", module + "models", module + "server/mcpserver", module + "server/control", module + "server/bridge", "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		// The person's MCP servers as tools: mcp-go's client, the core's types.
		"server/toolservers": {module + "store", module + "models", module + "ui", module + "server/mcpserver", module + "server/control", module + "server/bridge", module + "server/tools", "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		"server/bridge":      {module + "store", module + "models", module + "ui", module + "server/agent", "fyne.io/", "database/sql", "github.com/ollama/ollama", "github.com/zalando/go-keyring", "github.com/mark3labs/mcp-go/server"},
		// Starting and stopping the endpoint and the control channel.
		"server/serving":   {module + "store", module + "models", module + "ui", "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		"server/control":   {module + "store", module + "models", module + "ui", module + "server/mcpserver", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go"},
		"store":            {module + "ui", module + "models", module + "server/mcpserver", module + "server/control", "fyne.io/", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		"store/atomicfile": {module + "ui", module + "models", module + "server", module + "store/keychain", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go"},
		"store/keychain":   {module + "ui", module + "models", module + "server/mcpserver", module + "store", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama"},
		"models/sampling":  {module + "store", module + "ui", module + "server/mcpserver", module + "models/ollama", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go/server", "github.com/mark3labs/mcp-go/client", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
		"models/ollama":    {module + "store", module + "ui", module + "server/mcpserver", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go", "github.com/zalando/go-keyring"},
		// Each adapter speaks one provider's API through its own SDK, and
		// never reads a key itself: the connector hands it over.
		"models/openai":    {module + "store", module + "ui", module + "server/mcpserver", module + "models/ollama", module + "models/anthropic", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama", "github.com/zalando/go-keyring", "github.com/anthropics/"},
		"models/anthropic": {module + "store", module + "ui", module + "server/mcpserver", module + "models/ollama", module + "models/openai", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go", "github.com/ollama/ollama", "github.com/zalando/go-keyring", "github.com/openai/"},
		"models/providers": {module + "store", module + "ui", module + "server/mcpserver", "fyne.io/", "database/sql", "github.com/mark3labs/mcp-go", "github.com/zalando/go-keyring"},

		// The protocol pieces mcp-go lacks, beneath the MCP surface: mcp-go and the standard library, nothing of Deskhand's.
		"server/mcpserver/mcpfill": {module, "fyne.io/", "database/sql", "github.com/mattn/go-sqlite3", "github.com/ollama/ollama", "github.com/zalando/go-keyring"},
	}
	seen := map[string]bool{}
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		rules, ok := forbidden[rel]
		if !ok {
			continue
		}
		seen[rel] = true
		for _, dep := range p.Deps {
			if dep == module+"store/atomicfile" { // a leaf helper for every package that writes files
				continue
			}
			for _, bad := range rules {
				if forbids(bad, dep) {
					t.Errorf("%s imports %s, which DESIGN.md §1 forbids", rel, dep)
				}
			}
		}
	}
	for rel := range forbidden {
		if !seen[rel] {
			t.Errorf("package %s not found; update the rules when moving packages", rel)
		}
	}
}

// forbids reports whether rule bans dep: a module path bans its
// subpackages too (uuid's use of database/sql/driver is no database/sql).
func forbids(rule, dep string) bool {
	switch {
	case strings.HasSuffix(rule, "/"):
		return strings.HasPrefix(dep, rule)
	case strings.Contains(rule, "."):
		return dep == rule || strings.HasPrefix(dep, rule+"/")
	}
	return dep == rule
}

// TestTopLevel: the top level is the design card's (DESIGN.md §1), plus
// the files of package main, the project's documents and CI.
func TestTopLevel(t *testing.T) {
	allowed := map[string]bool{"ui": true, "server": true, "store": true, "models": true, "assets": true,
		"FyneApp.toml": true, "go.mod": true, "go.sum": true, "Makefile": true, "README.md": true, "SECURITY.md": true, "LICENSE": true,
		".ci": true, ".gitignore": true, ".gitattributes": true}
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		top, _, nested := strings.Cut(f, "/")
		if seen[top] {
			continue
		}
		seen[top] = true
		if !allowed[top] && (nested || !strings.HasSuffix(top, ".go")) {
			t.Errorf("%s sits at the top level, outside the design card's folders", top)
		}
	}
}

// TestOnlyTheDesktopUsesFyne: fyne is the desktop's (ui/desktop, with the
// icons it bundles and main, which starts it); the command line and
// everything else run without it.
func TestOnlyTheDesktopUsesFyne(t *testing.T) {
	mayUseFyne := map[string]bool{module + "ui/desktop": true, module + "assets": true, strings.TrimSuffix(module, "/"): true}
	for _, p := range listPackages(t) {
		if mayUseFyne[p.ImportPath] || strings.HasPrefix(p.ImportPath, module+"assets/") {
			continue
		}
		if p.ImportPath == module+"ui/desktop/connector" {
			// It speaks the desktop's types, so fyne comes with them; it
			// calls none of fyne itself.
			for _, imp := range p.Imports {
				if strings.HasPrefix(imp, "fyne.io/") {
					t.Errorf("%s imports %s: it hands the desktop data, it does not draw", p.ImportPath, imp)
				}
			}
			continue
		}
		for _, dep := range p.Deps {
			if strings.HasPrefix(dep, "fyne.io/") {
				t.Errorf("%s depends on %s: only the desktop package uses fyne", p.ImportPath, dep)
				break
			}
		}
	}
}

// TestNoPlatformCodeWhereDarwinCannotBeChecked: package main and the
// desktop's packages import fyne, whose GL driver needs cgo and the macOS
// SDK, so CI's `GOOS=darwin CGO_ENABLED=0 go vet` cannot type-check them.
// Code for one OS therefore lives in fyne-free packages
// (ui/desktop/platform, ui/cli), where it is checked for every OS: here no
// file has a GOOS or GOARCH build constraint or file name suffix, and no
// code (tests aside) looks at runtime.GOOS or runtime.GOARCH.
func TestNoPlatformCodeWhereDarwinCannotBeChecked(t *testing.T) {
	out, err := exec.Command("go", "tool", "dist", "list").Output()
	if err != nil {
		t.Fatalf("go tool dist list: %v", err)
	}
	platformTag := map[string]bool{"unix": true}
	for _, target := range strings.Fields(string(out)) {
		goos, goarch, _ := strings.Cut(target, "/")
		platformTag[goos], platformTag[goarch] = true, true
	}
	checked := 0
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(p.ImportPath, module)
		if p.ImportPath != strings.TrimSuffix(module, "/") && rel != "ui/desktop" && !strings.HasPrefix(rel, "ui/desktop/") ||
			rel == "ui/desktop/platform" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(p.Dir, "*.go"))
		for _, file := range files {
			checked++
			name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".go"), "_test")
			if parts := strings.Split(name, "_"); len(parts) > 1 && platformTag[parts[len(parts)-1]] {
				t.Errorf("%s is built for one OS or architecture only (its name); move its code to ui/desktop/platform", file)
			}
			if tags := platformConstraint(t, file, platformTag); tags != "" {
				t.Errorf("%s has the build constraint %q; move its code to ui/desktop/platform", file, tags)
			}
			if !strings.HasSuffix(file, "_test.go") {
				for _, at := range runtimeGOOS(t, file) {
					t.Errorf("%s looks at the OS it runs on; move that to ui/desktop/platform", at)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no files checked")
	}
}

// platformConstraint is the file's build constraint when it names an OS
// or architecture ("unix" included), "" otherwise.
func platformConstraint(t *testing.T, file string, platformTag map[string]bool) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "package ") {
			break
		}
		if !constraint.IsGoBuild(line) && !constraint.IsPlusBuild(line) {
			continue
		}
		expr, err := constraint.Parse(line)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		named := false
		expr.Eval(func(tag string) bool {
			named = named || platformTag[tag]
			return true
		})
		if named {
			return line
		}
	}
	return ""
}

// runtimeGOOS is where the file reads runtime.GOOS or runtime.GOARCH.
func runtimeGOOS(t *testing.T, file string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	var at []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "runtime" && (sel.Sel.Name == "GOOS" || sel.Sel.Name == "GOARCH") {
				at = append(at, fset.Position(sel.Pos()).String())
			}
		}
		return true
	})
	return at
}

// TestPackageComments checks that every package has exactly one package
// comment.
func TestPackageComments(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.Doc == "" {
			t.Errorf("%s has no package comment", p.ImportPath)
		}
		out, err := exec.Command("go", "list", "-f", `{{range .GoFiles}}{{$.Dir}}/{{.}} {{end}}`, p.ImportPath).Output()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range strings.Fields(string(out)) {
			if hasPackageComment(t, f) {
				n++
			}
		}
		if n > 1 {
			t.Errorf("%s has %d files with a package comment; keep exactly one", p.ImportPath, n)
		}
	}
}

func hasPackageComment(t *testing.T, file string) bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	return f.Doc != nil
}

// TestCoreDependsOnTheStandardLibrary: the core reaches nothing outside the
// standard library but google/uuid (DESIGN.md §1). Go itself says which
// packages are standard: crypto/internal/entropy/v1.0.0 and
// vendor/golang.org/x/net/dns/dnsmessage (through crypto/rand and net)
// are, despite the dots in their paths.
func TestCoreDependsOnTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", "./server/agent").Output()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{module + "server/agent": true, "github.com/google/uuid": true}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, standard, _ := strings.Cut(line, " ")
		if standard != "true" && !allowed[path] {
			t.Errorf("server/agent depends on %s, outside the standard library", path)
		}
	}
}
