package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// words is the vocabulary of comments and prose.
var words = strings.Fields(`the a of to and in is it for on with as by at from that this be are was not
or an which data value file path read write error request return buffer index cache session tree node
entry option result handler server client stream context config limit offset line match pattern search
when then else each every only before after into over under between while until since because however`)

// Identifier parts. "Manifest" is left out of nouns so that
// LiteralPattern appears only where it is planted.
var (
	verbs = []string{"load", "read", "write", "build", "make", "new", "handle", "check", "update", "render", "parse", "open", "close", "find"}
	nouns = []string{"Config", "Request", "Buffer", "Token", "Index", "Cache", "Session", "Tree", "Node", "Entry", "Value", "Stream", "Path", "Limit"}
)

// language is one kind of file in the source tree.
type language struct {
	ext    string
	weight int
	// block appends one function, paragraph or record.
	block func(g *gen)
}

var languages = []language{
	{".go", 25, goBlock},
	{".py", 14, pyBlock},
	{".js", 9, jsBlock},
	{".ts", 8, jsBlock},
	{".rs", 7, rustBlock},
	{".c", 5, cBlock},
	{".h", 3, cBlock},
	{".java", 5, javaBlock},
	{".md", 9, proseBlock},
	{".txt", 4, proseBlock},
	{".json", 4, jsonBlock},
	{".yaml", 3, yamlBlock},
	{".html", 2, htmlBlock},
}

// binaryShare is the share of binary files, one in binaryShare.
const binaryShare = 80

// gen writes one file's content.
type gen struct {
	rng *rand.Rand
	b   []byte
}

func (g *gen) pick(list []string) string { return list[g.rng.IntN(len(list))] }

func (g *gen) ident() string {
	if g.rng.IntN(6000) == 0 {
		return LiteralPattern
	}
	return g.pick(verbs) + g.pick(nouns)
}

func (g *gen) words(lo, hi int) string {
	n := lo + g.rng.IntN(hi-lo+1)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.pick(words)
	}
	return strings.Join(parts, " ")
}

func (g *gen) line(format string, args ...any) {
	g.b = fmt.Appendf(g.b, format, args...)
	g.b = append(g.b, '\n')
}

func goBlock(g *gen) {
	g.line("// %s %s.", g.ident(), g.words(3, 12))
	g.line("func %s(ctx context.Context, %s int) (%s, error) {", g.ident(), g.pick(words[10:30]), g.pick(nouns))
	for range 2 + g.rng.IntN(8) {
		switch g.rng.IntN(4) {
		case 0:
			g.line("\t%s, err := %s(ctx, %s)", g.pick(words[10:30]), g.ident(), g.pick(words[10:30]))
			g.line("\tif err != nil {")
			g.line("\t\treturn nil, fmt.Errorf(\"%s: %%w\", err)", g.words(2, 5))
			g.line("\t}")
		case 1:
			g.line("\t// %s", g.words(4, 14))
		default:
			g.line("\t%s = %s(%s, %d)", g.pick(words[10:30]), g.ident(), g.pick(words[10:30]), g.rng.IntN(4096))
		}
	}
	g.line("\treturn %s, nil", g.pick(words[10:30]))
	g.line("}")
	g.line("")
}

func pyBlock(g *gen) {
	g.line("def %s(%s, %s=None):", g.ident(), g.pick(words[10:30]), g.pick(words[10:30]))
	g.line("    \"\"\"%s.\"\"\"", g.words(4, 12))
	for range 2 + g.rng.IntN(8) {
		if g.rng.IntN(3) == 0 {
			g.line("    # %s", g.words(3, 12))
		} else {
			g.line("    %s = %s(%s, %d)", g.pick(words[10:30]), g.ident(), g.pick(words[10:30]), g.rng.IntN(4096))
		}
	}
	g.line("    return %s", g.pick(words[10:30]))
	g.line("")
}

func jsBlock(g *gen) {
	if g.rng.IntN(200) == 0 {
		// A minified line, as bundles have.
		var sb strings.Builder
		for sb.Len() < 2000 {
			fmt.Fprintf(&sb, "var %s=%s(%d);", g.pick(words[10:30]), g.ident(), g.rng.IntN(100))
		}
		g.line("%s", sb.String())
		return
	}
	g.line("// %s", g.words(3, 12))
	g.line("export function %s(%s, %s) {", g.ident(), g.pick(words[10:30]), g.pick(words[10:30]))
	for range 2 + g.rng.IntN(8) {
		g.line("  const %s = %s(%s, %d);", g.pick(words[10:30]), g.ident(), g.pick(words[10:30]), g.rng.IntN(4096))
	}
	g.line("  return %s;", g.pick(words[10:30]))
	g.line("}")
	g.line("")
}

func rustBlock(g *gen) {
	g.line("/// %s.", g.words(4, 12))
	g.line("pub fn %s(%s: &str) -> Result<%s, Error> {", g.ident(), g.pick(words[10:30]), g.pick(nouns))
	for range 2 + g.rng.IntN(8) {
		g.line("    let %s = %s(%s)?;", g.pick(words[10:30]), g.ident(), g.pick(words[10:30]))
	}
	g.line("    Ok(%s)", g.pick(words[10:30]))
	g.line("}")
	g.line("")
}

func cBlock(g *gen) {
	g.line("/* %s */", g.words(4, 12))
	g.line("static int %s(struct %s *%s, size_t n)", g.ident(), strings.ToLower(g.pick(nouns)), g.pick(words[10:30]))
	g.line("{")
	for range 2 + g.rng.IntN(8) {
		g.line("\tif (%s(%s, %d) < 0)", g.ident(), g.pick(words[10:30]), g.rng.IntN(4096))
		g.line("\t\treturn -1;")
	}
	g.line("\treturn 0;")
	g.line("}")
	g.line("")
}

func javaBlock(g *gen) {
	g.line("    /** %s. */", g.words(4, 12))
	g.line("    public %s %s(%s %s) throws IOException {", g.pick(nouns), g.ident(), g.pick(nouns), g.pick(words[10:30]))
	for range 2 + g.rng.IntN(8) {
		g.line("        %s %s = %s(%s);", g.pick(nouns), g.pick(words[10:30]), g.ident(), g.pick(words[10:30]))
	}
	g.line("        return %s;", g.pick(words[10:30]))
	g.line("    }")
	g.line("")
}

func proseBlock(g *gen) {
	g.line("## %s", g.words(2, 5))
	g.line("")
	for range 2 + g.rng.IntN(6) {
		g.line("%s `%s` %s.", g.words(5, 12), g.ident(), g.words(3, 10))
	}
	g.line("")
}

func jsonBlock(g *gen) {
	g.line("  \"%s\": {", g.ident())
	for range 2 + g.rng.IntN(6) {
		g.line("    \"%s\": \"%s\",", g.pick(words[10:30]), g.words(1, 4))
	}
	g.line("    \"size\": %d", g.rng.IntN(1<<20))
	g.line("  },")
}

func yamlBlock(g *gen) {
	g.line("%s:", g.ident())
	for range 2 + g.rng.IntN(6) {
		g.line("  %s: %s", g.pick(words[10:30]), g.words(1, 4))
	}
}

func htmlBlock(g *gen) {
	g.line("<div class=\"%s\">", g.pick(words[10:30]))
	g.line("  <p>%s <code>%s</code> %s</p>", g.words(4, 10), g.ident(), g.words(3, 8))
	g.line("</div>")
}

// sourceDirs returns the directories of the source tree: ten top-level
// directories, each with a nested hierarchy four levels deep.
func sourceDirs() []string {
	tops := []string{"src", "lib", "pkg", "internal", "cmd", "docs", "tests", "tools", "web", "third_party"}
	var dirs []string
	for _, a := range tops {
		dirs = append(dirs, a)
		for b := range 8 {
			pb := filepath.Join(a, fmt.Sprintf("%s%d", verbs[b], b))
			dirs = append(dirs, pb)
			for c := range 6 {
				pc := filepath.Join(pb, strings.ToLower(nouns[c+b%4]))
				dirs = append(dirs, pc)
				for d := range 4 {
					dirs = append(dirs, filepath.Join(pc, fmt.Sprintf("v%d", d)))
				}
			}
		}
	}
	return dirs
}

// sourceFile returns the relative name and content of file i.
func sourceFile(dirs []string, i int) (string, []byte) {
	rng := rand.New(rand.NewPCG(1, uint64(i)))
	dir := dirs[rng.IntN(len(dirs))]
	// Sizes are log-uniform between 800 bytes and 40 KB: about 10 KB on
	// average, as in a typical repository.
	size := int(800 * math.Exp(rng.Float64()*math.Log(50)))
	if rng.IntN(binaryShare) == 0 {
		ext := []string{".png", ".so", ".pyc", ".bin"}[rng.IntN(4)]
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		copy(b, "\x89BIN\x00\x00\x00\x00")
		return filepath.Join(dir, fmt.Sprintf("blob%05d%s", i, ext)), b
	}
	total := 0
	for _, l := range languages {
		total += l.weight
	}
	k := rng.IntN(total)
	lang := languages[0]
	for _, l := range languages {
		if k < l.weight {
			lang = l
			break
		}
		k -= l.weight
	}
	g := &gen{rng: rng, b: make([]byte, 0, size+1024)}
	for len(g.b) < size {
		lang.block(g)
	}
	return filepath.Join(dir, fmt.Sprintf("%s_%05d%s", strings.ToLower(g.pick(nouns)), i, lang.ext)), g.b
}

// writeSourceTree writes SourceFiles files into dir.
func writeSourceTree(ctx context.Context, dir string) error {
	dirs := sourceDirs()
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := writeHidden(dir); err != nil {
		return err
	}
	return parallel(ctx, SourceFiles, func(i int) error {
		name, data := sourceFile(dirs, i)
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	})
}

// writeIgnoredTree writes IgnoredSourceFiles source files into dir, and
// IgnoredFiles more, with the same kinds of content, below its
// node_modules, which its .gitignore leaves out.
func writeIgnoredTree(ctx context.Context, dir string) error {
	dirs := sourceDirs()
	for _, d := range dirs {
		for _, top := range []string{dir, filepath.Join(dir, "node_modules")} {
			if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\n"), 0o644); err != nil {
		return err
	}
	return parallel(ctx, IgnoredSourceFiles+IgnoredFiles, func(i int) error {
		name, data := sourceFile(dirs, i)
		if i >= IgnoredSourceFiles {
			name = filepath.Join("node_modules", name)
		}
		return os.WriteFile(filepath.Join(dir, name), data, 0o644)
	})
}
