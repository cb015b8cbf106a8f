package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// groupColor colors the bars by client group.
var groupColor = map[string]string{
	"a": "#9e9e9e", // raw HTTP
	"b": "#ef6c00", // client-go
	"c": "#8e24aa", // kubectl get -w
	"d": "#1e88e5", // kubectl deltas
}

type panel struct {
	title  string
	metric func(sample) float64
	burst  bool
	format func(float64) string
}

// chartSVG draws, for every N, one row of bar panels: wall time, CPU time,
// peak RSS of the initial sync and the update-burst delay; bars are
// medians, whiskers min–max.
func chartSVG(runs []*runFile) string {
	panels := []panel{
		{"initial sync: wall (s)", wallOf, false, func(v float64) string { return fmt.Sprintf("%.2f", v/1000) }},
		{"initial sync: CPU (s)", cpuOf, false, func(v float64) string { return fmt.Sprintf("%.2f", v/1000) }},
		{"initial sync: peak RSS (MiB)", rssOf, false, func(v float64) string { return fmt.Sprintf("%.0f", v) }},
		{"update burst: delay (ms)", delayOf, true, func(v float64) string {
			if math.Abs(v) < 0.05 {
				v = 0 // no "-0.0"
			}
			return fmt.Sprintf("%.1f", v)
		}},
	}
	const (
		labelW  = 220
		panelW  = 190
		gap     = 16
		rowH    = 18
		barH    = 12
		headerH = 44
		titleH  = 22
		footerH = 26
	)
	width := labelW + len(panels)*(panelW+gap)
	height := 0
	for _, r := range runs {
		height += headerH + titleH + rowH*len(r.Clients) + 14
	}
	height += footerH

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="-apple-system,Segoe UI,Helvetica,Arial,sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	y := 0
	for _, r := range runs {
		fmt.Fprintf(&b, `<text x="8" y="%d" font-size="14" font-weight="bold" fill="#212121">%s ConfigMaps (%s of JSON) — medians, whiskers min–max, %d rounds</text>`+"\n",
			y+20, numberWithCommas(r.N), esc(mib(int64(r.ListBytes))), r.Rounds)
		fmt.Fprintf(&b, `<text x="8" y="%d" fill="#616161">%s, %d CPUs; %s; %s</text>`+"\n", y+36, esc(r.Machine.CPU), r.Machine.CPUs, esc(r.Kube), esc(r.Date[:10]))
		y += headerH
		top := y + titleH
		for i, c := range r.Clients {
			cy := top + i*rowH
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" fill="#212121">%s</text>`+"\n", labelW-8, cy+barH-2, esc(c.Label))
		}
		for pi, p := range panels {
			x0 := labelW + pi*(panelW+gap)
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold" fill="#424242">%s</text>`+"\n", x0, y+14, esc(p.title))
			stats := make([]stat, len(r.Clients))
			// The axis spans lo..hi; lo is below 0 only for negative
			// delays (the output came before the write's response).
			lo, hi := 0.0, 0.0
			for i, c := range r.Clients {
				samples := c.Sync
				if p.burst {
					samples = c.Burst
				}
				stats[i] = summarize(samples, p.metric)
				if stats[i].ok() {
					hi = math.Max(hi, stats[i].Max)
					lo = math.Min(lo, stats[i].Min)
				}
			}
			if p.burst {
				hi = math.Max(hi, 10)
			}
			if hi-lo <= 0 {
				hi = lo + 1
			}
			plotW := float64(panelW - 38) // room for the value text
			scale := plotW / (hi - lo)
			zero := float64(x0) - lo*scale
			xOf := func(v float64) float64 { return zero + v*scale }
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#bdbdbd"/>`+"\n", zero, top-3, zero, top+len(r.Clients)*rowH)
			for i, c := range r.Clients {
				s := stats[i]
				cy := top + i*rowH
				if !s.ok() {
					if p.burst && len(c.Burst) == 0 {
						fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#9e9e9e">n/a</text>`+"\n", x0+4, cy+barH-2)
					} else if s.Failed > 0 {
						fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#c62828">failed</text>`+"\n", x0+4, cy+barH-2)
					}
					continue
				}
				color := groupColor[c.Group]
				bx, bw := math.Min(zero, xOf(s.Median)), math.Abs(s.Median*scale)
				fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: median %s, min %s, max %s</title></rect>`+"\n",
					bx, cy, bw, barH, color, esc(c.Label), p.format(s.Median), p.format(s.Min), p.format(s.Max))
				wy := float64(cy) + barH/2
				fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#212121" stroke-width="1"/>`+"\n",
					xOf(s.Min), wy, xOf(s.Max), wy)
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#212121">%s</text>`+"\n", math.Max(xOf(s.Max), zero)+3, cy+barH-2, p.format(s.Median))
			}
		}
		y = top + len(r.Clients)*rowH + 14
	}
	legend := []struct{ g, name string }{{"a", "raw HTTP (wire limit)"}, {"b", "client-go Reflector+DeltaFIFO"}, {"c", "kubectl get -w"}, {"d", "kubectl deltas"}, {"", "burst delay: from the last write's response to its output line; target ≤ 100 ms"}}
	x := 8
	for _, l := range legend {
		if l.g == "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#616161">%s</text>`+"\n", x, y+13, esc(l.name))
			continue
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" fill="#424242">%s</text>`+"\n", x, y+4, groupColor[l.g], x+14, y+13, esc(l.name))
		x += 30 + 6*len(l.name)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func esc(s string) string { return html.EscapeString(s) }
