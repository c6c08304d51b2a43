// Package stats holds the statistics the benchmark reports: proportions
// with 95% Wilson score intervals, the two-proportion z-test that says
// whether two formats differ, and percentiles.
//
// Wilson rather than the normal ("Wald") interval because benchmark cells
// are small (tens of cases) and rates sit near 0 or 1, where the Wald
// interval collapses to a width of zero and claims certainty it does not
// have.
package stats
