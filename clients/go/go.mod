module quarry.dev/quarry-go

go 1.19
