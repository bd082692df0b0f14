module example.com/authapp

go 1.26.0

require github.com/dawn-go/dawn v0.0.0

// The test that builds this module points the replace at the checkout.
replace github.com/dawn-go/dawn => ../../..
