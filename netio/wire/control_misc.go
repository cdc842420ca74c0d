package wire

// ProducerInit asks the leader of one shard for a producer id; the answer
// is PRODUCER_INIT_OK. Producer state lives in that leader's memory: after
// a failover the new leader answers producer_unknown and the producer
// starts again here.
type ProducerInit struct {
	Stream StreamRef `json:"stream"`
	Shard  uint32    `json:"shard"`
}

// ProducerInitOK answers PRODUCER_INIT; the producer's first sequence is 0.
type ProducerInitOK struct {
	ProducerID uint64 `json:"producer_id"`
	Epoch      uint32 `json:"epoch"`
}

// BrokerList asks which brokers the cluster has; the answer is
// BROKER_LIST_RESULT. A client adds them to the brokers it will try and
// never drops its configured seeds.
type BrokerList struct{}

// BrokerInfo is one broker: its id and the address clients dial.
type BrokerInfo struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
}

// BrokerListResult answers BROKER_LIST.
type BrokerListResult struct {
	Brokers []BrokerInfo `json:"brokers"`
}

func (*ProducerInit) FrameType() Type     { return TypeProducerInit }
func (*ProducerInitOK) FrameType() Type   { return TypeProducerInitOK }
func (*BrokerList) FrameType() Type       { return TypeBrokerList }
func (*BrokerListResult) FrameType() Type { return TypeBrokerListResult }

func (m *ProducerInit) check(l Limits) error { return l.CheckStreamRef(m.Stream) }
func (*ProducerInitOK) check(Limits) error   { return nil }
func (*BrokerList) check(Limits) error       { return nil }
func (*BrokerListResult) check(Limits) error { return nil }
