package evidence

// MemScratch is memScratch for the external tests.
type MemScratch = memScratch
