package skills

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// maxListDescription is where Format cuts a description, so each skill
// stays on one line of a terminal.
const maxListDescription = 80

// Format renders a catalog as text for people (the `fencefs skills`
// command): a table of the skills in use with their paths and the start of
// their descriptions, then the shadowed copies and the problems, if any.
// Names, paths and reasons holding control characters are quoted, so no
// file name can forge a line.
func Format(cat *Catalog) string {
	var b strings.Builder
	if len(cat.Skills) == 0 {
		fmt.Fprintf(&b, "No skills found in %s.\n", strings.Join(quoteAll(cat.Roots), ", "))
	} else {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPATH\tDESCRIPTION")
		for _, s := range cat.Skills {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", safe(s.Name), safe(s.Path), oneLine(s.Description))
		}
		tw.Flush()
	}
	if len(cat.Shadowed) > 0 {
		b.WriteString("\nShadowed by an earlier root:\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, s := range cat.Shadowed {
			fmt.Fprintf(tw, "  %s\t%s\t(in use: %s)\n", safe(s.Skill.Name), safe(s.Skill.Path), safe(s.By.Path))
		}
		tw.Flush()
	}
	if len(cat.Problems) > 0 {
		b.WriteString("\nProblems:\n")
		for _, p := range cat.Problems {
			fmt.Fprintf(&b, "  %s: %s\n", safe(p.Path), safe(p.Reason))
		}
	}
	return b.String()
}

// oneLine returns the description on one line, cut to at most
// maxListDescription characters.
func oneLine(d string) string {
	d = strings.Join(strings.Fields(d), " ")
	if utf8.RuneCountInString(d) > maxListDescription {
		cut := string([]rune(d)[:maxListDescription-3])
		if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
			cut = cut[:i] // end on a whole word
		}
		d = cut + "..."
	}
	return safe(d)
}

// safe quotes s when it holds a control character or invalid UTF-8.
func safe(s string) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
	}
	return s
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = safe(s)
	}
	return out
}
