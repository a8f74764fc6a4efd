/// How much a call matters to the page: three tiers, which become the request gate's lanes.
public enum CallImportance: String, Sendable {
    /// Product, sale and SKU information: the first screen.
    case high
    /// Freight and logistics.
    case normal
    /// Comments, recommendations, media.
    case low
}

/// One call of the product-detail page: the step's name, the endpoint, and how the server
/// answers it.
struct PageCall: Sendable {
    let name: String
    let path: String
    let importance: CallImportance
    /// The server's typical latency before scaling; the demo server adds ±30 % jitter, drawn
    /// from the scenario's seed.
    let latencyMilliseconds: Int
    /// Calls with the same key share one flight.
    var coalescingKey: String? = nil
}

/// The product-detail page: twenty calls in four stages.
enum PageCatalog {
    static let basics = [
        PageCall(name: "basicInfo", path: "/product/basic", importance: .high, latencyMilliseconds: 120)
    ]
    static let sale = [
        PageCall(name: "saleInfo", path: "/product/sale", importance: .high, latencyMilliseconds: 80),
        PageCall(name: "skuSpu", path: "/product/sku", importance: .high, latencyMilliseconds: 95),
        PageCall(name: "price", path: "/product/price", importance: .high, latencyMilliseconds: 60),
        PageCall(name: "stock", path: "/product/stock", importance: .high, latencyMilliseconds: 70),
        PageCall(name: "promotions", path: "/product/promotions", importance: .high, latencyMilliseconds: 85),
    ]
    static let shipping = [
        PageCall(name: "freight", path: "/shipping/freight", importance: .normal, latencyMilliseconds: 110),
        PageCall(name: "logistics", path: "/shipping/logistics", importance: .normal, latencyMilliseconds: 140),
        PageCall(name: "deliveryEstimate", path: "/shipping/eta", importance: .normal, latencyMilliseconds: 95),
        PageCall(name: "addresses", path: "/user/addresses", importance: .normal, latencyMilliseconds: 75),
        PageCall(name: "storeInfo", path: "/store/info", importance: .normal, latencyMilliseconds: 90),
    ]
    static let extras = [
        PageCall(name: "comments", path: "/comments", importance: .low, latencyMilliseconds: 160),
        PageCall(name: "commentSummary", path: "/comments/summary", importance: .low, latencyMilliseconds: 100),
        PageCall(name: "recommendations", path: "/recommendations", importance: .low, latencyMilliseconds: 180),
        PageCall(name: "similarItems", path: "/recommendations/similar", importance: .low, latencyMilliseconds: 150),
        PageCall(name: "questions", path: "/questions", importance: .low, latencyMilliseconds: 120),
        PageCall(name: "coupons", path: "/coupons", importance: .low, latencyMilliseconds: 70),
        // The gallery and the share card need the same images: one flight serves both.
        PageCall(
            name: "gallery", path: "/images/gallery", importance: .low, latencyMilliseconds: 130,
            coalescingKey: "/images/gallery"),
        PageCall(
            name: "shareCard", path: "/images/gallery", importance: .low, latencyMilliseconds: 130,
            coalescingKey: "/images/gallery"),
    ]

    /// The page's three downloads, awaited together with a two-second limit.
    static let media = [
        PageCall(name: "introVideo", path: "/media/intro-video", importance: .low, latencyMilliseconds: 450),
        PageCall(name: "spin360", path: "/media/spin-360", importance: .low, latencyMilliseconds: 800),
        PageCall(name: "manualPDF", path: "/media/manual", importance: .low, latencyMilliseconds: 300),
    ]

    /// Every endpoint the server serves with a token, with its latency.
    static var dataEndpoints: [String: Int] {
        var endpoints: [String: Int] = ["/config": 90]
        for call in basics + sale + shipping + extras + media {
            endpoints[call.path] = call.latencyMilliseconds
        }
        return endpoints
    }
}
