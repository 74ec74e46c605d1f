package signin_test

import (
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

func storeSetStatus(pk, sk string, s user.Status) *store.Write {
	return store.Update(pk, sk, "SET #s = :s").Name("#s", "status").Value(":s", s)
}
