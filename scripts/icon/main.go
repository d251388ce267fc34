// Command icon draws whetstone's plugin icon: a knife resting on a two-grit
// whetstone, with sparks where the edge meets the stone, on a slate background.
//
// Usage:
//
//	go run ./scripts/icon .claude-plugin/icon.png
//
// The drawing is a handful of shapes described in a 512×512 design space.
// Each pixel averages 4×4 samples, which is all the anti-aliasing a flat icon
// needs; the output is deterministic, so the PNG only changes with this file.
package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

const (
	size    = 512 // output pixels per side; the directory wants 512–2048
	samples = 4   // samples per pixel per axis
)

var (
	background = rgb(0x1d, 0x29, 0x36)
	shadow     = rgb(0x13, 0x1b, 0x24)
	fineGrit   = rgb(0xea, 0xe0, 0xca)
	coarseGrit = rgb(0xc8, 0x62, 0x3c)
	seam       = rgb(0x9c, 0x4a, 0x2c)
	steel      = rgb(0xc2, 0xcc, 0xd5)
	spine      = rgb(0x9a, 0xa7, 0xb3)
	bevel      = rgb(0xf1, 0xf5, 0xf8)
	bolster    = rgb(0x8a, 0x97, 0xa3)
	handle     = rgb(0x4b, 0x2f, 0x23)
	rivet      = rgb(0xd0, 0xd7, 0xdd)
	spark      = rgb(0xff, 0xc8, 0x57)
)

func rgb(r, g, b uint8) color.RGBA { return color.RGBA{r, g, b, 0xff} }

type point struct{ x, y float64 }

// knife maps design space into the knife's own frame: u runs from the bolster
// towards the tip, v from the spine (negative) to the edge (positive).
type knife struct {
	ox, oy   float64 // design-space position of the bolster
	scale    float64 // design-space units per knife unit
	sin, cos float64
	blade    []point // outline, spine first, then the edge back to the heel
	edge     []point // the cutting edge, tip to heel
}

func newKnife() *knife {
	const angle = 7 * math.Pi / 180 // tip down, handle raised: the edge rests on the stone
	k := &knife{ox: 178, oy: 178, scale: 0.88, sin: math.Sin(angle), cos: math.Cos(angle)}
	k.blade = append(k.blade, point{0, -34}, point{200, -34})
	k.blade = append(k.blade, quad(point{200, -34}, point{268, -30}, point{305, 16}, 24)...)
	k.edge = quad(point{305, 16}, point{250, 32}, point{190, 32}, 24)
	k.edge = append(k.edge, point{0, 32})
	k.blade = append(k.blade, k.edge...)
	return k
}

// local converts a design-space point into the knife's frame.
func (k *knife) local(x, y float64) (u, v float64) {
	dx, dy := (x-k.ox)/k.scale, (y-k.oy)/k.scale
	return dx*k.cos + dy*k.sin, -dx*k.sin + dy*k.cos
}

// quad samples a quadratic Bézier curve, without its first point.
func quad(a, c, b point, n int) []point {
	pts := make([]point, 0, n)
	for i := 1; i <= n; i++ {
		t := float64(i) / float64(n)
		s := 1 - t
		pts = append(pts, point{
			s*s*a.x + 2*s*t*c.x + t*t*b.x,
			s*s*a.y + 2*s*t*c.y + t*t*b.y,
		})
	}
	return pts
}

// inPolygon reports whether p lies inside the closed polygon (even-odd rule).
func inPolygon(p point, poly []point) bool {
	in := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		a, b := poly[i], poly[j]
		if (a.y > p.y) != (b.y > p.y) && p.x < (b.x-a.x)*(p.y-a.y)/(b.y-a.y)+a.x {
			in = !in
		}
	}
	return in
}

// distToPolyline is the distance from p to the nearest segment of line.
func distToPolyline(p point, line []point) float64 {
	best := math.Inf(1)
	for i := 1; i < len(line); i++ {
		a, b := line[i-1], line[i]
		dx, dy := b.x-a.x, b.y-a.y
		t := ((p.x-a.x)*dx + (p.y-a.y)*dy) / (dx*dx + dy*dy)
		t = math.Max(0, math.Min(1, t))
		best = math.Min(best, math.Hypot(p.x-(a.x+t*dx), p.y-(a.y+t*dy)))
	}
	return best
}

// inRoundRect reports whether (x, y) lies in the rectangle [x0,x1]×[y0,y1]
// with corners rounded to radius r.
func inRoundRect(x, y, x0, y0, x1, y1, r float64) bool {
	if x < x0 || x > x1 || y < y0 || y > y1 {
		return false
	}
	cx := math.Max(x0+r, math.Min(x, x1-r))
	cy := math.Max(y0+r, math.Min(y, y1-r))
	return math.Hypot(x-cx, y-cy) <= r
}

// inSpark reports whether (x, y) lies in a four-pointed star of radius r.
func inSpark(x, y, cx, cy, r float64) bool {
	dx, dy := math.Abs(x-cx)/r, math.Abs(y-cy)/r
	return math.Sqrt(dx)+math.Sqrt(dy) <= 1
}

// shade returns the colour of the drawing at design-space point (x, y).
func (k *knife) shade(x, y float64) color.RGBA {
	// Sparks fly from where the edge meets the stone.
	for _, s := range [...]struct{ x, y, r float64 }{{462, 196, 24}, {430, 152, 13}, {480, 142, 9}} {
		if inSpark(x, y, s.x, s.y, s.r) {
			return spark
		}
	}

	u, v := k.local(x, y)
	switch {
	case inRoundRect(u, v, -150, -24, -10, 24, 16):
		for _, ru := range [...]float64{-118, -80, -42} {
			if math.Hypot(u-ru, v) <= 5.5 {
				return rivet
			}
		}
		return handle
	case inRoundRect(u, v, -14, -38, 8, 36, 5):
		return bolster
	case inPolygon(point{u, v}, k.blade):
		switch {
		case distToPolyline(point{u, v}, k.edge) < 10:
			return bevel
		case v < -26:
			return spine
		}
		return steel
	}

	// The stone: fine grit on top of coarse grit, with a seam between them.
	if inRoundRect(x, y, 58, 229, 454, 349, 20) {
		switch {
		case y < 285:
			return fineGrit
		case y < 291:
			return seam
		}
		return coarseGrit
	}
	if dx, dy := (x-256)/210, (y-361)/16; dx*dx+dy*dy <= 1 {
		return shadow
	}
	return background
}

func render() *image.RGBA {
	k := newKnife()
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	scale := 512.0 / size
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var r, g, b int
			for sy := 0; sy < samples; sy++ {
				for sx := 0; sx < samples; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/samples) * scale
					y := (float64(py) + (float64(sy)+0.5)/samples) * scale
					c := k.shade(x, y)
					r, g, b = r+int(c.R), g+int(c.G), b+int(c.B)
				}
			}
			n := samples * samples
			img.SetRGBA(px, py, color.RGBA{uint8(r / n), uint8(g / n), uint8(b / n), 0xff})
		}
	}
	return img
}

func run(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(f, render()); err != nil {
		f.Close()
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return f.Close()
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/icon OUTPUT.png")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "icon:", err)
		os.Exit(1)
	}
}
