package tokenizer_test

import (
	"fmt"

	"github.com/surgebench/surge/datasets/tokenizer"
)

func ExampleDefault() {
	tok, err := tokenizer.Default()
	if err != nil {
		panic(err)
	}
	ids := tok.Encode("Hello world!")
	fmt.Println(tok.Name(), ids, tok.Count("Hello world!"), tok.Decode(ids))
	// Output: qwen3 (embedded) [9707 1879 0] 3 Hello world!
}

// Load takes a tokenizer.json (plain or gzip-compressed) or the folder of a
// Hugging Face model that holds one (tokenizer.Load("models/llama3") with
// Meta's Llama 3 tokenizer gives "llama3 [4513 10961 22 1541 956]", tested
// in TestReference). Here it loads the gzip-compressed Qwen3 file the
// package embeds.
func ExampleLoad() {
	tok, err := tokenizer.Load("qwen3.json.gz")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tok.Encode("1234567 don't"))
	// Output: [16 17 18 19 20 21 22 1513 944]
}
