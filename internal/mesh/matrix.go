package mesh

import (
	"math"
	"sort"

	api "github.com/cnperf/cnperf/api/v1alpha1"
	"github.com/cnperf/cnperf/internal/meshview"
)

// madScale makes the median absolute deviation estimate σ for normally distributed data
// (1/Φ⁻¹(3/4)), as R's mad() does.
const madScale = 1.4826

// minRelativeMAD floors the MAD at this fraction of |median|: when most cells are identical
// (a rate limit, a saturated link) the raw MAD is 0 and any hair's-breadth dip would be an
// outlier.
const minRelativeMAD = 0.005

// Spread is the centre and scale of a matrix's values and the outlier threshold.
type Spread struct {
	Median, MAD, Threshold float64
}

// Outliers flags the values on the bad side of median ∓ k·MAD: below median − k·MAD when
// higher is better (throughput, rates), above median + k·MAD when lower is better (latency).
// MAD is scaled by 1.4826 and floored at 0.5 % of |median|. With fewer than
// meshview.MinCellsForOutliers values nothing is flagged and ok is false.
func Outliers(values []float64, k float64, higherIsBetter bool) (sp Spread, flags []bool, ok bool) {
	flags = make([]bool, len(values))
	if len(values) < meshview.MinCellsForOutliers {
		return Spread{}, flags, false
	}
	med := median(values)
	dev := make([]float64, len(values))
	for i, v := range values {
		dev[i] = math.Abs(v - med)
	}
	mad := madScale * median(dev)
	if floor := minRelativeMAD * math.Abs(med); mad < floor {
		mad = floor
	}
	sp = Spread{Median: med, MAD: mad}
	if higherIsBetter {
		sp.Threshold = med - k*mad
	} else {
		sp.Threshold = med + k*mad
	}
	for i, v := range values {
		if higherIsBetter {
			flags[i] = v < sp.Threshold
		} else {
			flags[i] = v > sp.Threshold
		}
	}
	return sp, flags, true
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Finish fills a matrix's spread and outlier flags from its cells' values.
func Finish(m *api.MeshMatrix, k float64, higherIsBetter bool) {
	var vals []float64
	var idx []int
	for i := range m.Cells {
		m.Cells[i].Outlier = false
		if m.Cells[i].Value != nil && m.Cells[i].Error == "" {
			vals = append(vals, *m.Cells[i].Value)
			idx = append(idx, i)
		}
	}
	sp, flags, ok := Outliers(vals, k, higherIsBetter)
	m.Median, m.MAD, m.Threshold = nil, nil, nil
	if !ok {
		return
	}
	m.Median, m.MAD, m.Threshold = new(sp.Median), new(sp.MAD), new(sp.Threshold)
	for j, i := range idx {
		m.Cells[i].Outlier = flags[j]
	}
}
