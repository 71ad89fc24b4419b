package durable

import (
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/api/serviceerror"
)

func TestOnlyARefusalOfTheSearchAttributesIsStartedAgainWithoutThem(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{serviceerror.NewInvalidArgument("Namespace default has no mapping defined for search attribute GNS3ProjectID"), true},
		{fmt.Errorf("starting: %w", serviceerror.NewInvalidArgument("search attribute GNS3UserID is not defined")), true},
		{serviceerror.NewInvalidArgument("WorkflowId is not set"), false},
		{serviceerror.NewUnavailable("search attribute store is down"), false},
		{errors.New("search attribute"), false},
		{nil, false},
	} {
		if got := UnregisteredAttributes(c.err); got != c.want {
			t.Errorf("UnregisteredAttributes(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
